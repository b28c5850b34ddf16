/** Control flow of the evaluator, carried by exceptions so deep recursion unwinds cleanly. */
import type { PyNode } from './ast';
import type { Value } from './values';

export class ReturnSignal {
  constructor(readonly value: Value) {}
}
export class BreakSignal {}
export class ContinueSignal {}
/** A `raise` in user code: aborts the current user function call. */
export class RaiseSignal {
  constructor(readonly node?: PyNode) {}
}
/** Step or depth budget exhausted: aborts the whole model evaluation. */
export class LimitSignal {
  constructor(readonly why: string) {}
}

export function isSignal(e: unknown): boolean {
  return e instanceof ReturnSignal || e instanceof BreakSignal || e instanceof ContinueSignal || e instanceof RaiseSignal || e instanceof LimitSignal;
}
