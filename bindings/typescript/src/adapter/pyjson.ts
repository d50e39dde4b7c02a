/**
 * The exact text form of Python's `json.dumps(value, sort_keys=True)`: keys sorted by
 * code point, `", "` and `": "` separators, every non-ASCII character escaped as
 * lowercase `\uXXXX`. The lifecycle protocol's response lines use this form.
 *
 * Input must already be plain JSON data (see {@link toPlainJson}).
 */
export function pythonJsonDumps(value: unknown): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join("");
}

/** Error raised when a value is not representable as JSON. */
export class JsonEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonEncodeError";
  }
}

/**
 * Turn an adapter-supplied value into plain JSON data, the way `JSON.stringify` would
 * (calling `toJSON`, dropping `undefined` members), but rejecting what JSON cannot
 * carry exactly: non-finite numbers, BigInt, functions, symbols and cycles.
 */
export function toPlainJson(value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "number" && !Number.isFinite(item)) {
        throw new JsonEncodeError("non-finite number");
      }
      if (typeof item === "function" || typeof item === "symbol") {
        throw new JsonEncodeError(`value of type ${typeof item}`);
      }
      return item;
    });
  } catch (error) {
    if (error instanceof JsonEncodeError) throw error;
    throw new JsonEncodeError(error instanceof Error ? error.message : "not JSON");
  }
  if (text === undefined) throw new JsonEncodeError("value is not JSON");
  return JSON.parse(text);
}

function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const delta = (left[index] as string).codePointAt(0)! - (right[index] as string).codePointAt(0)!;
    if (delta !== 0) return delta;
  }
  return left.length - right.length;
}

function write(value: unknown, out: string[]): void {
  if (value === null) {
    out.push("null");
  } else if (value === true) {
    out.push("true");
  } else if (value === false) {
    out.push("false");
  } else if (typeof value === "number") {
    out.push(formatNumber(value));
  } else if (typeof value === "string") {
    out.push(quote(value));
  } else if (Array.isArray(value)) {
    out.push("[");
    value.forEach((item, index) => {
      if (index > 0) out.push(", ");
      write(item === undefined ? null : item, out);
    });
    out.push("]");
  } else if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort(compareCodePoints);
    out.push("{");
    keys.forEach((key, index) => {
      if (index > 0) out.push(", ");
      out.push(quote(key), ": ");
      write(record[key], out);
    });
    out.push("}");
  } else {
    throw new JsonEncodeError(`value of type ${typeof value}`);
  }
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new JsonEncodeError("non-finite number");
  if (Object.is(value, -0)) return "-0.0";
  const text = String(value);
  // Python spells exponents with a sign and at least two digits: 1e-07, 1e+21.
  const match = /^(-?[0-9.]+)e([+-])([0-9]+)$/.exec(text);
  if (match) {
    const mantissa = match[1] as string;
    const digits = (match[3] as string).padStart(2, "0");
    return `${mantissa}e${match[2]}${digits}`;
  }
  return text;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

function quote(text: string): string {
  let result = '"';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    const code = text.charCodeAt(index);
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) {
      result += short;
    } else if (code < 0x20 || code > 0x7e) {
      result += `\\u${code.toString(16).padStart(4, "0")}`;
    } else {
      result += char;
    }
  }
  return `${result}"`;
}
