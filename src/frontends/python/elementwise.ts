/**
 * Elementwise math on activations written in forward: `x.exp()`, `torch.sqrt(v)`,
 * `x.pow(3)` and `x ** 3` (minGPT's NewGELU), `x.clamp(min=0)`, `-x` (Llama's
 * rotate_half), `att.masked_fill(mask, float('-inf'))` (minGPT's causal mask).
 * Each is one kernel over every element, memory-bound as an activation is, so each
 * becomes an `activation` node with its function. Read as pass-throughs they cost
 * nothing: a hand-written attention's mask fill over [B, H, T, T] was free.
 *
 * Arithmetic on a parameter or a buffer alone (Mamba's `-torch.exp(self.A_log)`)
 * runs once per step, not once per sample: it is left out, as `1.0 + self.weight` is.
 */
import type { Attrs } from '../../core/ir';
import type { ActivationFn } from '../../core/ops';
import { bindArgs } from './torchLayers';
import { toNumber, type TensorV, type Value } from './values';

const ELEMENTWISE: Readonly<{ [name: string]: ActivationFn }> = {
  abs: 'abs', absolute: 'abs', neg: 'neg', negative: 'neg', exp: 'exp', log: 'log', sqrt: 'sqrt', rsqrt: 'rsqrt',
  square: 'square', pow: 'pow', clamp: 'clamp', clip: 'clamp', sin: 'sin', cos: 'cos', reciprocal: 'reciprocal',
  erf: 'erf', masked_fill: 'masked_fill',
};

/** A tensor that holds one value per sample: ops on it run per sample. Parameters, buffers and positions do not. */
export const perSample = (t: TensorV): boolean => !t.unbatched && !t.batchOne && !t.param && !t.positions;

/**
 * The node's attrs for torch function or tensor method `name` with the tensor first in `args`; undefined when the
 * name is no elementwise math. A pow's exponent and a clamp's bounds are kept when they are numbers: the trial
 * workers run the same function (a tensor exponent is timed as a square).
 */
export function elementwiseAttrs(name: string, args: Value[], kwargs: Map<string, Value>): Attrs | undefined {
  if (!Object.prototype.hasOwnProperty.call(ELEMENTWISE, name)) return undefined;
  const fn = ELEMENTWISE[name]!;
  if (fn === 'pow') return powerAttrs(bindArgs(['input', 'exponent'], args, kwargs).get('exponent'));
  if (fn === 'clamp') {
    const a = bindArgs(['input', 'min', 'max'], args, kwargs);
    const [min, max] = [toNumber(a.get('min')), toNumber(a.get('max'))];
    return { fn, ...(finite(min) ? { min } : {}), ...(finite(max) ? { max } : {}) };
  }
  return { fn };
}

/** `x ** e` and `x.pow(e)`. */
export function powerAttrs(exponent: Value | undefined): Attrs {
  const e = exponent === undefined ? undefined : toNumber(exponent);
  return { fn: 'pow', ...(finite(e) ? { exponent: e } : {}) };
}

// JSON, which carries attrs to the trial workers, has no infinities.
const finite = (n: number | undefined): n is number => n !== undefined && Number.isFinite(n);
