/**
 * torch.einsum with two operands in the batched-matmul forms attention code
 * writes (`"b h i d, b h j d -> b h i j"`, `"B G H I J, B G H J D -> B G H I D"`):
 * shared leading letters are batch dims, one letter is contracted, and an
 * operand whose contracted letter is not where matmul wants it is transposed
 * first. Any other equation is an opaque layer saying so (the model is then
 * incomplete), never an output guessed from an input.
 */
import type { Interp } from './interpreter';
import { matmulOf, recordOp } from './tensorOps';
import { permuteOf } from './tensorShaping';
import type { CallSite, TensorV, Value } from './values';

function opaque(interp: Interp, inputs: TensorV[], site: CallSite, why: string): Value {
  return recordOp(interp, { base: 'einsum', type: 'torch.einsum', op: 'opaque', attrs: { reason: `torch.einsum ${why}` }, inputs, site });
}

export function einsum(interp: Interp, args: Value[], site: CallSite): Value {
  const eq = args[0];
  const operands = (args.length === 2 && (args[1].k === 'list' || args[1].k === 'tuple') ? args[1].items : args.slice(1)).filter((v): v is TensorV => v.k === 'tensor' && v.id !== '');
  if (eq?.k !== 'str') return operands.length ? opaque(interp, operands, site, 'with an equation the evaluator could not compute') : { k: 'unknown' };
  const equation = eq.v.replace(/\s+/g, '');
  const [lhs, out] = equation.split('->');
  const terms = lhs.split(',');
  const why = `'${eq.v}' is not a batched matmul WAP models`;
  if (out === undefined || terms.length !== 2 || operands.length !== 2 || /\./.test(equation)) return opaque(interp, operands, site, why);
  const [a, b] = terms;
  const [x, y] = operands;
  const n = out.length;
  if (a.length !== n || b.length !== n || n < 3 || x.shape?.length !== n || y.shape?.length !== n) return opaque(interp, operands, site, why);
  const batch = out.slice(0, n - 2);
  if (a.slice(0, n - 2) !== batch || b.slice(0, n - 2) !== batch) return opaque(interp, operands, site, why);
  const [r, s] = out.slice(n - 2);
  const ta = a.slice(n - 2);
  const tb = b.slice(n - 2);
  const c = [...ta].find((l) => tb.includes(l) && !out.includes(l));
  if (!c || !ta.includes(r) || !tb.includes(s)) return opaque(interp, operands, site, why);
  const swap = Array.from({ length: n }, (_, i) => (i === n - 2 ? n - 1 : i === n - 1 ? n - 2 : i));
  const left = ta === r + c ? x : ta === c + r ? permuteOf(interp, x, swap, site) : undefined;
  const right = tb === c + s ? y : tb === s + c ? permuteOf(interp, y, swap, site) : undefined;
  if (left?.k !== 'tensor' || right?.k !== 'tensor') return opaque(interp, operands, site, why);
  return matmulOf(interp, left, right, site);
}
