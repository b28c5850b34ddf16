/**
 * What a throw says, whatever was thrown. The evaluator's control flow is carried by plain objects (signals.ts:
 * LimitSignal's `why`), which `String()` prints as "[object Object]": a step budget spent where no guard caught it
 * reached the frontend's last catch as "internal error ([object Object])", telling nobody what happened.
 */
export function thrownMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e !== 'object' || e === null) return String(e);
  const { why, message } = e as { why?: unknown; message?: unknown };
  if (typeof why === 'string') return why;
  if (typeof message === 'string') return message;
  const kind = e.constructor?.name;
  if (kind && kind !== 'Object') return kind;
  try {
    return JSON.stringify(e) ?? String(e);
  } catch {
    return String(e);
  }
}
