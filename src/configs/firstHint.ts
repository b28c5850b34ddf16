/**
 * The first of several readings of the files beside a model that gives an
 * answer (a precision, an optimizer). A reading that throws is a malformed
 * config, which the config checks report; here it just says nothing.
 */
export function firstHint<T>(readings: Iterable<() => T | undefined>): T | undefined {
  for (const read of readings) {
    try {
      const hint = read();
      if (hint) return hint;
    } catch {
      // Reported by the config checks, not here.
    }
  }
  return undefined;
}
