#!/usr/bin/env bash
# Generates the run directories `fabric view` is tested on, with the `fabric` CLI and its
# scripted adapter (nothing else: no network, no credentials):
#
#   bash fabric-view/tests/make-fixtures.sh FABRIC OUT
#
#   OUT/run/         a git workspace and `fabric run` of one turn with sampled system stats
#                    (CPU burned, memory held in steps), Relay on with an ATIF trajectory
#                    (system, user, an assistant tool call and its result, the answer), a text
#                    artifact, a workspace patch (a tracked file changed, a new file);
#                    OUT/run/result.json is its RunResult, OUT/run/out/.fabric/... the
#                    invocation directory (with health.json, `fabric check` of the config)
#   OUT/batch/       `fabric batch` of 20 items over the same adapter and trajectory (3 of them
#                    fail with `fixture_failure`): results.jsonl and summary.json
#
# Used by the browser tests (fabric-view/web/test/e2e.test.mjs); prints nothing on success.
set -euo pipefail
fabric=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
mkdir -p "$out/run" "$out/batch"
out=$(cd "$out" && pwd)

# An adapter descriptor for the CLI's own scripted adapter that declares Relay (ATIF output)
# and its health levels (the run's `fabric check`).
descriptor() {
  cat >"$1/scripted-relay.fabric-adapter.json" <<JSON
{
  "contract_version": "fabric.adapter/v1alpha2",
  "adapter_id": "fixture.scripted-relay",
  "adapter_kind": "process",
  "runner": {"command": "$fabric", "args": ["__adapter", "scripted"]},
  "settings_schema": {"\$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
  "telemetry": {"providers": {"relay": {"outputs": ["atif"], "integration_modes": ["hooks"]}}},
  "capabilities": {"metadata": {"health_levels": ["live", "active", "ready"]}}
}
JSON
}

# The Relay ATIF trajectory the scripted replies list (`relay_artifacts`), under DIR/out/relay/:
# system, user, an assistant tool call with its result (the tool ran a subagent, whose own
# trajectory is DIR/out/relay/sub/lister.atif.json), the answer; the agent steps state their
# model, token metrics and timestamps (the model calls' latency).
trajectory() {
  mkdir -p "$1/out/relay/sub"
  cat >"$1/out/relay/trajectory.atif.json" <<'JSON'
{"schema_version": "ATIF-v1.4", "session_id": "view-fixture", "agent": {"name": "scripted", "version": "1"},
 "steps": [
  {"step_id": 1, "source": "system", "message": "You are a careful file assistant."},
  {"step_id": 2, "source": "user", "message": "Which files are in the workspace?", "timestamp": "2026-01-01T10:00:00Z"},
  {"step_id": 3, "source": "agent", "message": "", "model_name": "stub/model", "timestamp": "2026-01-01T10:00:01.200Z",
   "tool_calls": [{"tool_call_id": "call-1", "function_name": "list_files", "arguments": {"path": "."}}],
   "observation": {"results": [{"source_call_id": "call-1", "content": "README.md\nnotes.txt",
     "subagent_trajectory_ref": [{"session_id": "lister", "trajectory_path": "sub/lister.atif.json"}]}]},
   "metrics": {"prompt_tokens": 200, "completion_tokens": 12}},
  {"step_id": 4, "source": "agent", "message": "There are two files: README.md and notes.txt.", "model_name": "stub/model",
   "timestamp": "2026-01-01T10:00:02Z", "metrics": {"prompt_tokens": 212, "completion_tokens": 25}}
 ]}
JSON
  cat >"$1/out/relay/sub/lister.atif.json" <<'JSON'
{"schema_version": "ATIF-v1.4", "session_id": "lister", "agent": {"name": "lister", "version": "1"},
 "steps": [
  {"step_id": 1, "source": "user", "message": "List the workspace."},
  {"step_id": 2, "source": "agent", "message": "README.md, notes.txt", "model_name": "stub/small",
   "metrics": {"prompt_tokens": 40, "completion_tokens": 6}}
 ]}
JSON
}

# --- one run -------------------------------------------------------------------------------
run=$out/run
descriptor "$run"
cat >"$run/fabric.json" <<'JSON'
{
  "schema_version": "fabric.agent/v1alpha1",
  "metadata": {"name": "view-fixture", "description": "A scripted turn with everything fabric view shows."},
  "harness": {
    "adapter_id": "fixture.scripted-relay",
    "settings": {
      "replies": [{
        "output": {
          "response": "There are two files: README.md and notes.txt.",
          "relay_artifacts": [{"kind": "atif", "path": "relay/trajectory.atif.json"}]
        },
        "usage": {"input_tokens": 412, "output_tokens": 37, "total_tokens": 449}
      }]
    }
  },
  "discovery": {"local_paths": ["scripted-relay.fabric-adapter.json"]},
  "environment": {"workspace": "workspace", "artifacts": "out"},
  "telemetry": {"providers": {"relay": {}}},
  "relay": {"project": "view-fixture", "observability": {"atif": {"enabled": true}}},
  "runtime": {"timeout_seconds": 60},
  "system_stats": {"sampling": {"interval_ms": 20}}
}
JSON
cat >"$run/request.json" <<'JSON'
{
  "input": "Which files are in the workspace?",
  "context": {"scripted": {
    "write_files": {"README.md": "# Fixture workspace\n\nEdited by the agent.\n", "notes.txt": "a new file\nwith two lines\n"},
    "burn_cpu_ms": 300,
    "memory_mib": [16, 48, 16],
    "step_ms": 150,
    "artifact": {"name": "report.txt", "content": "Files: README.md, notes.txt\n", "media_type": "text/plain"}
  }}
}
JSON
trajectory "$run"
mkdir -p "$run/workspace"
printf '# Fixture workspace\n' >"$run/workspace/README.md"
git -C "$run/workspace" init -q
git -C "$run/workspace" -c user.name=fixture -c user.email=fixture@localhost add README.md
git -C "$run/workspace" -c user.name=fixture -c user.email=fixture@localhost commit -qm base
"$fabric" run "$run/fabric.json" --request "$run/request.json" --json >"$run/result.json"
# A health-check report of the same config, saved in the run's invocation directory.
invocations=("$run"/out/.fabric/*/*/stdout.txt)
if [ "${#invocations[@]}" -ne 1 ] || [ ! -f "${invocations[0]}" ]; then
  echo "error: expected one invocation directory under $run/out/.fabric, found ${invocations[*]}" >&2
  exit 1
fi
"$fabric" check "$run/fabric.json" >"$(dirname "${invocations[0]}")/health.json"

# --- one batch -----------------------------------------------------------------------------
# The same adapter and trajectory: every item's conversation has the tool call.
batch=$out/batch
descriptor "$batch"
trajectory "$batch"
cat >"$batch/fabric.json" <<'JSON'
{
  "schema_version": "fabric.agent/v1alpha1",
  "metadata": {"name": "view-batch"},
  "harness": {
    "adapter_id": "fixture.scripted-relay",
    "settings": {
      "replies": [{
        "output": {"response": "done", "relay_artifacts": [{"kind": "atif", "path": "relay/trajectory.atif.json"}]},
        "usage": {"input_tokens": 30, "output_tokens": 8, "total_tokens": 38}
      }]
    }
  },
  "discovery": {"local_paths": ["scripted-relay.fabric-adapter.json"]},
  "environment": {"artifacts": "out"},
  "telemetry": {"providers": {"relay": {}}},
  "relay": {"project": "view-fixture", "observability": {"atif": {"enabled": true}}}
}
JSON
for i in $(seq 1 20); do
  if [ $((i % 7)) -eq 0 ] || [ "$i" -eq 20 ]; then
    printf '{"id": "item-%02d", "input": "task %d", "context": {"scripted": {"fail": {"code": "fixture_failure", "message": "item %d fails on purpose"}}}}\n' "$i" "$i" "$i"
  else
    printf '{"id": "item-%02d", "input": "task %d", "context": {"scripted": {"sleep_ms": %d}}}\n' "$i" "$i" $((i * 5))
  fi
done >"$batch/items.jsonl"
status=0
"$fabric" batch "$batch/fabric.json" --items "$batch/items.jsonl" --output "$batch/results.jsonl" \
  --concurrency 4 --json >"$batch/summary.json" || status=$?
# 1: some items failed (on purpose); anything else is a broken fixture.
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
  echo "error: fabric batch exited $status" >&2
  exit 1
fi
