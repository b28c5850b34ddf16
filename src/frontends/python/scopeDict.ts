/**
 * A module's scope seen as a dict, live: `globals()` (scriptExec.ts, where nanoGPT's configurator writes
 * `globals()[key] = value`) and a module's `__dict__` (the ImageNet example picks its model as
 * `models.__dict__[args.arch]()`). String keys are names; reads and writes go to the scope itself.
 */
import { str, type Scope, type Value } from './values';

export class ScopeDict extends Map<string, [Value, Value]> {
  constructor(readonly scope: Scope) {
    super();
  }
  override get(key: string): [Value, Value] | undefined {
    const v = key.startsWith('s:') ? this.scope.vars.get(key.slice(2)) : undefined;
    return v === undefined ? undefined : [str(key.slice(2)), v];
  }
  override set(key: string, entry: [Value, Value]): this {
    if (key.startsWith('s:')) this.scope.vars.set(key.slice(2), entry[1]);
    return this;
  }
  override has(key: string): boolean {
    return key.startsWith('s:') && this.scope.vars.has(key.slice(2));
  }
  override delete(key: string): boolean {
    return key.startsWith('s:') && this.scope.vars.delete(key.slice(2));
  }
  override clear(): void {
    // A script never clears its own module; nothing here may either.
  }
  override get size(): number {
    return this.scope.vars.size;
  }
  override *entries(): MapIterator<[string, [Value, Value]]> {
    for (const [k, v] of [...this.scope.vars]) yield [`s:${k}`, [str(k), v]];
  }
  override *keys(): MapIterator<string> {
    for (const [k] of this.entries()) yield k;
  }
  override *values(): MapIterator<[Value, Value]> {
    for (const [, v] of this.entries()) yield v;
  }
  override [Symbol.iterator](): MapIterator<[string, [Value, Value]]> {
    return this.entries();
  }
  override forEach(fn: (value: [Value, Value], key: string, map: Map<string, [Value, Value]>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
}
