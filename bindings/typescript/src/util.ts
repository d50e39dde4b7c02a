/** Private helpers shared by the Promise-based API modules. */

/**
 * Resolves like `work`, or rejects with `signal.reason` once `signal` aborts. An
 * abandoned outcome is passed to `abandon` when it arrives (and never reported as an
 * unhandled rejection).
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, abandon?: (value: T) => void): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
      work.then((value) => abandon?.(value), () => undefined);
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (!settled) {
          settled = true;
          resolve(value);
        }
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (!settled) {
          settled = true;
          reject(error);
        }
      },
    );
  });
}

export function parse<T>(text: string | null): T {
  return (text === null ? null : JSON.parse(text)) as T;
}
