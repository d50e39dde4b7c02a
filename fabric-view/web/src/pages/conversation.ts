// A trajectory as a conversation: messages by role, tool calls with their arguments, the tool
// results beside their call id, the model call's latency and tokens, and subagents nested in
// collapsible blocks.
import type { Message, ToolCall } from '../api';
import { fmtInt, fmtMs, h, pre } from '../dom';

function argumentsText(args: unknown): string {
  if (typeof args === 'string') {
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }
  return JSON.stringify(args, null, 2) ?? '';
}

function toolCall(call: ToolCall): HTMLElement {
  return h(
    'div',
    { class: 'tool-call', 'data-testid': 'tool-call', 'data-tool': call.name },
    h('div', { class: 'tool-head' }, h('span', { class: 'tag' }, 'tool call'), h('strong', {}, call.name), call.id ? h('code', {}, call.id) : null),
    pre(argumentsText(call.arguments), 'args'),
  );
}

function message(m: Message): HTMLElement {
  const mc = m.model_call;
  const meta = mc
    ? h(
        'span',
        { class: 'model-call', 'data-testid': 'model-call' },
        [mc.model, mc.latency_ms !== null ? fmtMs(mc.latency_ms) : null, mc.input_tokens !== null ? `${fmtInt(mc.input_tokens)} in` : null, mc.output_tokens !== null ? `${fmtInt(mc.output_tokens)} out` : null]
          .filter((s) => s)
          .join(' · '),
      )
    : null;
  const el = h(
    'div',
    { class: `message role-${m.role.replace(/[^a-z]/g, '')}`, 'data-role': m.role },
    h('div', { class: 'message-head' }, h('span', { class: 'role' }, m.role), m.tool_call_id ? h('span', { class: 'muted' }, `result of ${m.tool_call_id}`) : null, meta),
    m.content ? h('div', { class: 'content' }, m.content) : null,
    ...(m.tool_calls ?? []).map(toolCall),
  );
  if (m.children && m.children.length > 0) {
    el.append(
      h(
        'details',
        { class: 'subagent', open: true, 'data-testid': 'subagent' },
        h('summary', {}, `subagent ${m.subagent ?? ''} (${m.children.length} messages)`),
        ...m.children.map(message),
      ),
    );
  }
  return el;
}

export function conversation(messages: Message[]): HTMLElement {
  if (messages.length === 0) return h('p', { class: 'muted' }, 'No trajectory, model calls or output to show.');
  return h('div', { class: 'conversation', 'data-testid': 'conversation' }, ...messages.map(message));
}
