/**
 * Python operators on symbolic tensors: `x + y` → add, `x @ w` → matmul, an activation and a Python number
 * (`x * 0.125`) → a one-input add or mul, `x ** 3` → pow, `-x` → neg. An eager RMSNorm's steps pass through
 * rmsNormIdiom.ts first, which records them as written and takes them back if the norm completes.
 */
import type { Attrs, OpKind } from '../../core/ir';
import type { PyNode } from './ast';
import { perSample, powerAttrs } from './elementwise';
import type { Interp } from './interpreter';
import { EAGER_RMS_TYPE, rmsBinaryStep, squareOfSelf } from './rmsNormIdiom';
import { isGraphTensor, matmul, recordOp } from './tensorOps';
import { toNumber, type Dims, type TensorV, type Value } from './values';

function broadcast(a?: Dims, b?: Dims): Dims | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.length >= b.length ? a : b;
}

export function tensorBinary(interp: Interp, op: string, a: Value, b: Value, node: PyNode): Value {
  const recordNorm = (x: TensorV) => recordOp(interp, {
    base: 'rms_norm', type: EAGER_RMS_TYPE, op: 'layernorm', attrs: { scale: false, center: false, rms: true, eagerFp32: true }, inputs: [x], site: interp.site(node, op), shape: x.shape,
  });
  const asWritten = () => binaryAsWritten(interp, op, a, b, node);
  return rmsBinaryStep(interp, op, a, b, node, recordNorm, asWritten) ?? asWritten();
}

function binaryAsWritten(interp: Interp, op: string, a: Value, b: Value, node: PyNode): Value {
  const ta = isGraphTensor(a) ? a : undefined;
  const tb = isGraphTensor(b) ? b : undefined;
  const kind: OpKind | undefined = op === '+' || op === '-' ? 'add' : op === '*' || op === '/' ? 'mul' : undefined;
  const type = { '+': 'add', '-': 'sub', '*': 'mul', '/': 'div' }[op] ?? kind;
  if (!ta || !tb) {
    const t = ta ?? tb;
    // An activation by a constant (nanoGPT's scores `* (1.0 / math.sqrt(d))`, `x * math.sqrt(d_model)`) is a kernel
    // over every element. A parameter's own arithmetic (`1.0 + self.weight`) runs once, not per sample: left out.
    if (t && perSample(t) && op === '**' && t === ta) return recordOp(interp, { base: 'pow', type: 'pow', op: 'activation', attrs: powerAttrs(b), inputs: [t], site: interp.site(node, op), shape: t.shape });
    if (t && kind && type && perSample(t)) {
      const constant = toNumber(t === ta ? b : a);
      // The operator and side travel with the node: the trial workers run the same arithmetic.
      const attrs: Attrs = { operator: op, ...(constant === undefined ? {} : { constant }), ...(t === tb ? { constantFirst: true } : {}) };
      return recordOp(interp, { base: type, type, op: kind, attrs, inputs: [t], site: interp.site(node, op), shape: t.shape });
    }
    return ta ?? tb ?? (a.k === 'tensor' ? a : b);
  }
  const site = interp.site(node, op);
  if (op === '@') return matmul(interp, ta, tb, site, 'matmul');
  if (!kind || !type) return ta;
  const out = recordOp(interp, { base: type, type, op: kind, attrs: {}, inputs: [ta, tb], site, shape: broadcast(ta.shape, tb.shape) });
  return op === '*' ? squareOfSelf(out, ta, tb) : out;
}

/** `-x` on an activation: Llama's rotate_half negates half of every query and key. */
export function tensorNegate(interp: Interp, x: TensorV, node: PyNode): Value {
  if (!isGraphTensor(x) || !perSample(x)) return x;
  return recordOp(interp, { base: 'neg', type: 'neg', op: 'activation', attrs: { fn: 'neg' }, inputs: [x], site: interp.site(node, '-'), shape: x.shape });
}
