/**
 * The layer catalogue: one entry per OpKind (see ../ops.ts for the canonical
 * attrs each entry reads). `Record<OpKind, OpInfo>` makes a missing kind a
 * compile error when ir.ts grows.
 */
import type { Attrs, OpKind, Shape } from '../ir';
import { activationOps } from './activations';
import { attentionOps } from './attention';
import { combiningOps } from './combining';
import { convOps } from './conv';
import { linearOps } from './linear';
import { normOps } from './norms';
import { opaqueOps } from './opaque';
import { parameterOps } from './parameter';
import { poolingOps } from './pooling';
import { recurrentOps } from './recurrent';
import { reduceOps } from './reduce';
import { shapingOps } from './shaping';
import type { InferContext, InferResult, OpInfo } from './types';
import { runInfer } from './types';

function buildRegistry(): Record<OpKind, OpInfo> {
  const all = [...shapingOps, ...convOps, ...linearOps, ...normOps, ...poolingOps, ...activationOps, ...combiningOps, ...reduceOps, ...attentionOps, ...recurrentOps, ...parameterOps, ...opaqueOps];
  const registry = {} as Record<OpKind, OpInfo>;
  for (const info of all) registry[info.op] = info;
  return registry;
}

/** Every OpKind, listed through a Record so adding a kind to ir.ts without listing it here fails to compile. */
const KIND_SET: Record<OpKind, true> = {
  input: true, conv: true, separable_conv: true, linear: true, embedding: true, batchnorm: true, layernorm: true,
  groupnorm: true, pool: true, flatten: true, reshape: true, permute: true, zeropad: true, upsample: true,
  dropout: true, activation: true, add: true, mul: true, concat: true, split: true, matmul: true, reduce: true, mha: true,
  sdpa: true, rnn: true, identity: true, gather: true, parameter: true, opaque: true,
};
export const ALL_OP_KINDS: readonly OpKind[] = Object.keys(KIND_SET) as OpKind[];

export const catalogue: Readonly<Record<OpKind, OpInfo>> = buildRegistry();

/** The catalogue entry for an op kind; undefined for a kind this build does not know (e.g. from a newer frontend). */
export function opInfo(op: OpKind | string): OpInfo | undefined {
  return Object.prototype.hasOwnProperty.call(catalogue, op) ? catalogue[op as OpKind] : undefined;
}

/** Infers one layer; never throws (bad attrs and unknown kinds come back as `{ error }`). */
export function inferLayer(op: OpKind | string, inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferResult {
  const info = opInfo(op);
  if (!info) return { error: `unknown op kind '${op}'` };
  return runInfer(info, inputShapes, attrs, ctx);
}

export type { CatalogueFamily, InferContext, InferError, InferOk, InferResult, OpInfo } from './types';
export { isInferError } from './types';
