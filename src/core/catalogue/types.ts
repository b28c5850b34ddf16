/**
 * The catalogue's contract: one entry per OpKind that turns input shapes and
 * canonical attrs (see ../ops.ts) into an output shape and a training workload.
 */
import type { Attrs, Layout, OpKind, Shape } from '../ir';

export interface InferContext {
  /** Where the channel axis sits for image-like tensors. */
  layout: Layout;
  /** Bytes per element for activations (4 = fp32). */
  dtypeBytes: number;
}

/** Per-sample numbers for one layer; shapes exclude batch. */
export interface InferOk {
  outputShape: Shape;
  params: number;
  nonTrainable: number;
  forwardFlops: number;
  backwardFlops: number;
  /** Bytes the backward pass needs kept from the forward; 0 when omitted. */
  savedActivationBytes?: number;
  /**
   * Of savedActivationBytes, the bytes whose element size is fixed whatever the training precision:
   * int64 indices (max-pool argmax, embedding token ids) and 1-byte dropout masks. Autocast and .half()
   * change float tensors only, so the planner rescales the rest and keeps these as they are.
   */
  savedFixedBytes?: number;
  /**
   * Which graph tensors are among savedActivationBytes (the rest are the op's own: masks, indices, statistics).
   * Autograd saves a tensor once however many ops keep it (a ReLU's output is also the next conv's saved
   * input), so the analysis counts a tensor named here only at the first layer that saves it.
   */
  saves?: SavedTensors;
  /**
   * What the op's backward runs and keeps when its weights are frozen but a gradient still flows through it, where
   * that is not the rule frozenParameters.ts applies to every op (a GEMM-shaped op halves): the FLOPs of its
   * weight gradients, which a frozen op skips, and the bytes it still saves (a frozen projection keeps no input).
   */
  frozen?: FrozenBackward;
}

export interface FrozenBackward {
  /** Of backwardFlops, the weight gradients' FLOPs. */
  weightGradientFlops: number;
  /** Saved bytes with the weights frozen, all the op's own (it then saves no graph tensor); absent: as trained. */
  savedActivationBytes?: number;
}

/** Graph tensors an op saves for its backward: some of its inputs (by argument index) and/or its output. */
export interface SavedTensors {
  inputs?: number[];
  output?: boolean;
}

export interface InferError {
  error: string;
}

export type InferResult = InferOk | InferError;

export type CatalogueFamily =
  | 'io'
  | 'conv'
  | 'linear'
  | 'norm'
  | 'pooling'
  | 'shaping'
  | 'activation'
  | 'combining'
  | 'attention'
  | 'recurrent'
  | 'opaque';

export interface OpInfo {
  op: OpKind;
  family: CatalogueFamily;
  /** True when the op can own trainable parameters (conv, linear, norms with affine, …). */
  weighted: boolean;
  /** One line for hovers and docs. */
  summary: string;
  infer(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferResult;
}

export function isInferError(r: InferResult): r is InferError {
  return typeof (r as InferError).error === 'string';
}

/** Thrown inside catalogue helpers to abort one inference with a message; `runInfer` turns it into `{ error }`. */
export class AttrError extends Error {}

/** Runs an entry, converting AttrError (and any other exception) into `{ error }` so callers never see a throw. */
export function runInfer(info: OpInfo, inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferResult {
  try {
    return info.infer(inputShapes, attrs ?? {}, ctx);
  } catch (e) {
    if (e instanceof AttrError) return { error: e.message };
    return { error: `internal error while inferring ${info.op}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
