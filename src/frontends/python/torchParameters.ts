/**
 * nn.Parameter attributes of user modules (ViT's class token and position
 * embedding, ConvNeXt's layer scale). Read inside forward, a parameter becomes
 * a `parameter` node named like torch names it (`encoder.pos_embedding`), so
 * its elements count as the model's params and its shape flows into the ops
 * that use it. Read anywhere else (in __init__, for init calls), it stays a
 * plain value.
 */
import type { LayerSpec } from '../../core/ir';
import type { Interp } from './interpreter';
import { recordOp } from './tensorOps';
import { keyOf, type CallSite, type InstV, type TensorV, type Value } from './values';
import { withProps } from '../../core/objects';

type ParamV = Extract<Value, { k: 'param' }>;

/**
 * Parameter nodes nothing consumes were read only for their metadata or handed to a
 * functional op as its weight (which counts them itself): dropping them keeps each
 * parameter counted once.
 */
export function dropUnconsumedParameters(layers: LayerSpec[], outputs: readonly string[]): LayerSpec[] {
  // Most models have no parameter nodes: then nothing is dropped, and every layer's inputs need not be collected.
  if (!layers.some((l) => l.op === 'parameter')) return layers.slice();
  const used = new Set(outputs);
  for (const l of layers) for (const i of l.inputs) used.add(i);
  return layers.filter((l) => l.op !== 'parameter' || used.has(l.id));
}

/**
 * A module called on a constant array (Swin V2's `self.cpb_mlp(self.relative_coords_table)`): the
 * constant becomes a parameter node without params, so the layers it feeds are in the graph. Its
 * leading 1 (if any) stands for the batch, as torch's forward hooks see it.
 */
export function constantNode(interp: Interp, shape: number[], site: CallSite): TensorV | undefined {
  if (!shape.length) return undefined;
  const batched = shape.length >= 2 && shape[0] === 1;
  const t = recordOp(interp, { base: 'constant', type: 'buffer', op: 'parameter', attrs: { shape, batched, constant: true }, inputs: [], site, shape: batched ? shape : [1, ...shape] });
  return t.k === 'tensor' ? withProps(t, { batchOne: batched, unbatched: !batched }) : undefined;
}

export function readParameter(interp: Interp, owner: InstV, name: string, p: ParamV): Value {
  const g = interp.graph;
  if (!g || g.framework !== 'pytorch' || g.scope.length === 0) return p;
  const key = 'param:' + keyOf(p);
  const seen = g.memo.get(key);
  if (seen) return seen;
  const prefix = g.paths.get(owner);
  const shape = p.shape && p.shape.every((d) => d !== undefined) ? (p.shape as number[]) : undefined;
  // A leading 1 on a tensor of rank ≥ 2 is the batch dim it broadcasts over; otherwise it has none.
  const batched = !!shape && shape.length >= 2 && shape[0] === 1;
  const site = interp.site(owner.cls.node, name);
  const t = recordOp(interp, {
    name: prefix ? `${prefix}.${name}` : name,
    base: name,
    type: 'nn.Parameter',
    op: 'parameter',
    attrs: { shape: shape ?? [], batched },
    inputs: [],
    site,
    range: owner.range,
    shape: shape ? (batched ? shape : [1, ...shape]) : undefined,
    frozen: p.owner.frozen === true,
  });
  if (t.k !== 'tensor') return t;
  const tensor: TensorV = withProps(t, { param: p, unbatched: !batched });
  g.memo.set(key, tensor);
  return tensor;
}
