/**
 * einops' rearrange, as a function (`rearrange(t, 'b n (h d) -> b h n d', h=8)`)
 * and as a layer (`Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=16,
 * p2=16)`, vit-pytorch's patch embedding). A rearrange is a reshape that splits
 * the input's groups into elementary axes, a permute of those, and a reshape
 * that merges the output's groups (einops' own reduction of a pattern), so it
 * is recorded as those shaping ops (tensorShaping.ts) and priced as they are.
 * The batch must stay the first axis, alone. `repeat` is read where it
 * broadcasts a tensor to the batch (a class token), `reduce` as a rearrange to
 * elementary axes, a `reduce` node over the dropped ones and a rearrange of the
 * rest; anything else says so.
 */
import type { Interp } from './interpreter';
import { torchDims } from './batchFolding';
import { permute, reshape } from './tensorShaping';
import { isGraphTensor, recordOp } from './tensorOps';
import type { ReduceFn } from '../../core/ops';
import { UNKNOWN, int, native, toNumber, type CallSite, type TensorV, type Value } from './values';

type Group = string[];

/** 'b n (h d)' → [['b'], ['n'], ['h', 'd']]; '1' is an axis of size one; undefined for what is not modelled ('...'). */
function parseSide(side: string): Group[] | undefined {
  const groups: Group[] = [];
  const re = /\(([^()]*)\)|(\S+)/g;
  for (let m = re.exec(side); m; m = re.exec(side)) {
    const names = m[1] !== undefined ? m[1].trim().split(/\s+/).filter(Boolean) : [m[2]];
    if (names.some((n) => n === '...' || !/^([A-Za-z_]\w*|1)$/.test(n))) return undefined;
    groups.push(names);
  }
  return groups;
}

const product = (xs: number[]): number => xs.reduce((a, b) => a * b, 1);

/** Why the pattern cannot be recorded, or the three steps' sizes. */
function plan(dims: ReadonlyArray<number | undefined>, left: Group[], right: Group[], lengths: Map<string, number>): string | { split: number[]; order: number[]; merged: number[]; names: string[] } {
  if (left.length !== dims.length) return `its left side has ${left.length} axes, the tensor ${dims.length}`;
  const batch = left[0];
  if (batch.length !== 1 || right[0]?.length !== 1 || right[0][0] !== batch[0]) return 'the batch axis moves or is grouped';
  const size = new Map<string, number>(lengths);
  const names: string[] = [];
  for (let i = 1; i < left.length; i++) {
    const group = left[i];
    for (const n of group) if (n !== '1') names.push(n);
    const unknown = group.filter((n) => n !== '1' && !size.has(n));
    const known = product(group.filter((n) => n !== '1' && size.has(n)).map((n) => size.get(n)!));
    if (unknown.length > 1) return `more than one size of (${group.join(' ')}) is unknown`;
    if (unknown.length === 1) {
      const d = dims[i];
      if (d === undefined || d % known !== 0) return `the size of ${unknown[0]} is unknown here`;
      size.set(unknown[0], d / known);
    }
  }
  const rightNames = right.slice(1).flat().filter((n) => n !== '1');
  if (rightNames.length !== names.length || rightNames.some((n) => !names.includes(n))) return 'its two sides name different axes (repeat or reduce, not rearrange)';
  return {
    split: names.map((n) => size.get(n)!),
    order: rightNames.map((n) => names.indexOf(n)),
    merged: right.slice(1).map((g) => product(g.filter((n) => n !== '1').map((n) => size.get(n)!))),
    names,
  };
}

export function rearrange(interp: Interp, x: Value, pattern: Value, axes: Map<string, Value>, site: CallSite): Value {
  if (!isGraphTensor(x)) return UNKNOWN;
  const unsupported = (why: string, starve = false): Value => {
    if (starve && interp.graph && !interp.graph.concrete) interp.graph.starved = true;
    interp.warnAt(site.range, `einops rearrange '${pattern.k === 'str' ? pattern.v : '?'}' is not modelled (${why}); its output is taken to be its input`, 'partial-eval');
    return x;
  };
  const sides = pattern.k === 'str' ? pattern.v.split('->') : [];
  const left = sides.length === 2 ? parseSide(sides[0]) : undefined;
  const right = sides.length === 2 ? parseSide(sides[1]) : undefined;
  if (!left || !right) return unsupported('a pattern WAP cannot read, or one with ...');
  const lengths = new Map<string, number>();
  for (const [k, v] of axes) {
    const n = toNumber(v);
    if (n === undefined) return unsupported(`the length of ${k} is unknown`, true);
    lengths.set(k, n);
  }
  const dims = torchDims(x as TensorV);
  if (!dims) return unsupported('the tensor rank is unknown', true);
  const steps = plan(dims, left, right, lengths);
  if (typeof steps === 'string') return unsupported(steps, /unknown here/.test(steps));
  let y: Value = x;
  // The recorded ops say where they come from: Tensor.rearrange, not the module or variable the call went through.
  const at: CallSite = { node: site.node, range: site.range, calleeText: 'einops.rearrange' };
  const sizes = (xs: number[]): Value[] => [int(-1), ...xs.map(int)];
  const current = dims.slice(1);
  if (steps.split.length !== current.length || steps.split.some((d, i) => d !== current[i])) y = reshape(interp, y as TensorV, sizes(steps.split), at);
  if (y.k === 'tensor' && steps.order.some((d, i) => d !== i)) y = permute(interp, y, [0, ...steps.order.map((d) => d + 1)], at);
  const permuted = steps.order.map((d) => steps.split[d]);
  if (y.k === 'tensor' && (steps.merged.length !== permuted.length || steps.merged.some((d, i) => d !== permuted[i]))) y = reshape(interp, y, sizes(steps.merged), at);
  return y;
}

/** `einops.rearrange` and `einops.layers.torch.Rearrange`; undefined for the other einops names. */
export function callEinops(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  if (path === 'einops.rearrange') return rearrange(interp, args[0] ?? UNKNOWN, args[1] ?? kwargs.get('pattern') ?? UNKNOWN, withoutKey(kwargs, 'pattern'), site);
  if (/^einops\.layers\.(torch\.)?Rearrange$/.test(path)) {
    const pattern = args[0] ?? kwargs.get('pattern') ?? UNKNOWN;
    const axes = withoutKey(kwargs, 'pattern');
    // Called by a container read from the module level, the call has no node: the layer's own line stands in.
    return native('Rearrange', ([x], _kw, s) => rearrange(interp, x ?? UNKNOWN, pattern, axes, s.node ? s : site));
  }
  if (path === 'einops.repeat') return repeat(interp, args[0] ?? UNKNOWN, args[1] ?? kwargs.get('pattern') ?? UNKNOWN, site);
  if (path === 'einops.reduce') return reduce(interp, args[0] ?? UNKNOWN, args[1] ?? kwargs.get('pattern') ?? UNKNOWN, args[2] ?? kwargs.get('reduction') ?? UNKNOWN, withoutKey(withoutKey(kwargs, 'pattern'), 'reduction'), site);
  if (/^einops\.layers\.(torch\.)?Reduce$/.test(path)) {
    const pattern = args[0] ?? kwargs.get('pattern') ?? UNKNOWN;
    const reduction = args[1] ?? kwargs.get('reduction') ?? UNKNOWN;
    const axes = withoutKey(withoutKey(kwargs, 'pattern'), 'reduction');
    return native('Reduce', ([x], _kw, s) => reduce(interp, x ?? UNKNOWN, pattern, reduction, axes, s.node ? s : site));
  }
  if (/^einops\.(einsum|pack|unpack)$/.test(path) || /^einops\.layers\.(torch\.)?EinMix$/.test(path)) {
    interp.warnAt(site.range, `${path} is not modelled; what it computes is missing`, 'unknown-op');
  }
  return undefined;
}

/**
 * `repeat(self.cls_token, '1 1 d -> b 1 d', b=b)` (also `'1 ... d -> b ... d'`, `'() n d -> b n d'`): a tensor
 * broadcast to the batch, which per sample is the tensor itself, as `expand(b, -1, -1)` is. A repeat along other
 * axes copies data WAP does not record: said, and its output taken to be its input.
 */
function repeat(interp: Interp, x: Value, pattern: Value, site: CallSite): Value {
  if (!isGraphTensor(x)) return UNKNOWN;
  const sides = pattern.k === 'str' ? pattern.v.split('->').map((side) => side.trim().split(/\s+/)) : [];
  const [left, right] = sides;
  const broadcast = sides.length === 2 && left.length === right.length && (left[0] === '1' || left[0] === '()') && /^[A-Za-z_]\w*$/.test(right[0]) && !left.includes(right[0]) && left.slice(1).join(' ') === right.slice(1).join(' ');
  if (broadcast) return x;
  interp.warnAt(site.range, `einops repeat '${pattern.k === 'str' ? pattern.v : '?'}' is not modelled (only a broadcast to the batch is); its output is taken to be its input`, 'partial-eval');
  return x;
}

const REDUCTIONS: Readonly<Record<string, ReduceFn>> = { mean: 'mean', sum: 'sum', max: 'amax', min: 'amin' };

/**
 * `reduce(x, 'b n d -> b d', 'mean')` and the `Reduce` layer (`Reduce('b c (h h2) (w w2) -> b c h w', 'max', h2=2,
 * w2=2)`: a pooling): the left side's groups split into elementary axes (a reshape), the axes the right side drops
 * reduced (a `reduce` node), and what remains rearranged to the right side (tensorShaping's reshape and permute).
 */
function reduce(interp: Interp, x: Value, pattern: Value, reduction: Value, axes: Map<string, Value>, site: CallSite): Value {
  if (!isGraphTensor(x)) return UNKNOWN;
  const text = pattern.k === 'str' ? pattern.v : '?';
  const unsupported = (why: string): Value => {
    interp.warnAt(site.range, `einops reduce '${text}' is not modelled (${why}); its output is taken to be its input`, 'partial-eval');
    return x;
  };
  const fn = reduction.k === 'str' ? REDUCTIONS[reduction.v] : undefined;
  if (!fn) return unsupported(`the reduction ${reduction.k === 'str' ? `'${reduction.v}'` : 'WAP cannot read'}`);
  const sides = text.split('->');
  const left = sides.length === 2 ? parseSide(sides[0]) : undefined;
  const right = sides.length === 2 ? parseSide(sides[1]) : undefined;
  if (!left || !right) return unsupported('a pattern WAP cannot read, or one with ...');
  const kept = new Set(right.flat());
  const elementary: Group[] = left.map((g, i) => (i === 0 ? g : g.filter((n) => n !== '1'))).flatMap((g, i) => (i === 0 ? [g] : g.map((n) => [n])));
  // Split the left side into its elementary axes first (a rearrange to them), then reduce the dropped ones.
  const split = rearrange(interp, x, { k: 'str', v: `${sides[0]} -> ${elementary.map((g) => g.join(' ')).join(' ')}` }, axes, site);
  if (split === x && elementary.length !== left.length) return split;
  if (split.k !== 'tensor') return unsupported('the left side could not be split');
  const dropped = elementary.map((g, i) => (i > 0 && !kept.has(g[0]) ? i : -1)).filter((i) => i > 0);
  const at: CallSite = { node: site.node, range: site.range, calleeText: 'einops.reduce' };
  const remaining = elementary.filter((_, i) => !dropped.includes(i));
  const shape = split.shape ? split.shape.filter((_, i) => !dropped.includes(i)) : undefined;
  const reduced = dropped.length ? recordOp(interp, { base: 'reduce', type: 'einops.reduce', op: 'reduce', attrs: { fn, axes: dropped, keepDims: false }, inputs: [split], site: at, shape }) : split;
  return rearrange(interp, reduced, { k: 'str', v: `${remaining.map((g) => g.join(' ')).join(' ')} -> ${sides[1]}` }, new Map(), site);
}

const withoutKey = (kwargs: Map<string, Value>, key: string): Map<string, Value> => new Map([...kwargs].filter(([k]) => k !== key));
