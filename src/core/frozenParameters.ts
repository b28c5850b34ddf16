/**
 * What freezing parameters (`requires_grad_(False)`: a fine-tuned backbone, a
 * base model under adapters) does to a layer's training workload, following
 * PyTorch's autograd:
 * - A frozen parameter keeps its weights but has no gradient and no optimizer
 *   state: its count moves from `params` to `frozenParams`, and it has no
 *   gradient to all-reduce.
 * - Autograd records nothing where no input requires a gradient ("Backward
 *   computation is never performed in the subgraphs, where all Tensors didn't
 *   require gradients", PyTorch docs, notes/autograd.rst, "Excluding subgraphs
 *   from backward"): a layer with no trainable parameter of its own and no
 *   trainable layer upstream has no backward and saves nothing.
 * - A frozen layer downstream of trainable ones still passes the gradient on
 *   (the input gradient), but computes no weight gradient: the backward of a
 *   GEMM-shaped op (linear, convolution) is half its trained backward. Its
 *   saved tensors follow what torch 1.13 keeps (measured with
 *   `torch.autograd.graph.saved_tensors_hooks`): a frozen nn.Linear keeps only
 *   its weight, not its input; a frozen nn.Conv2d and LayerNorm keep what they
 *   keep when trained. Ops whose backward is more than one GEMM pair
 *   (nn.MultiheadAttention, RNNs) say what they skip and keep themselves
 *   (catalogue FrozenBackward).
 *
 * Runs after tied weights are accounted (a tied user of a frozen owner is
 * frozen too) and before saved tensors are shared out, so that a tensor a
 * frozen layer no longer saves is counted at the next layer that does.
 */
import type { FrozenBackward } from './catalogue/types';
import type { AnalyzedLayer, OpKind, Shape } from './ir';

/** Ops whose backward is an input-gradient GEMM plus a weight-gradient GEMM of the same size. */
const GEMM_BACKWARD: ReadonlySet<OpKind> = new Set(['linear', 'conv', 'separable_conv']);

/**
 * The share of a trained backward a frozen layer still runs (input gradient only): half for a GEMM-shaped op, whose
 * two gradients are GEMMs of equal FLOPs; all of it otherwise (a norm's weight gradient is a small reduction).
 */
function inputGradientShare(op: OpKind): number {
  return GEMM_BACKWARD.has(op) ? 0.5 : 1;
}

/** Of those, the ops whose input is saved only for the weight gradient (torch 1.13's addmm/matmul). */
const INPUT_SAVED_FOR_WEIGHT_GRADIENT: ReadonlySet<OpKind> = new Set(['linear']);

/**
 * Applies frozen parameters to the layers' workloads in place; `savedBy` (which graph tensors each layer saves)
 * is cleared where a layer no longer saves. `frozenBackwards`: per layer, what its op says its backward runs and
 * keeps with frozen weights (nn.MultiheadAttention, RNNs), over the GEMM rule. Without a frozen layer the workloads
 * are untouched.
 */
export function accountFrozenParameters(layers: AnalyzedLayer[], savedBy: Array<Array<{ id: string; shape: Shape }>>, frozenBackwards: ReadonlyArray<FrozenBackward | undefined> = []): void {
  if (!layers.some((l) => l.frozen)) return;
  const byId = new Map(layers.map((l) => [l.id, l]));
  const isFrozen = (l: AnalyzedLayer): boolean => l.frozen === true || (l.weightOwner !== undefined && byId.get(l.weightOwner)?.frozen === true);
  // Tensors whose gradient autograd computes: outputs of trainable layers and of anything downstream of one.
  const requiresGrad = new Set<string>();
  layers.forEach((layer, i) => {
    const w = layer.workload;
    const frozen = isFrozen(layer);
    const hasWeights = w.params > 0 || layer.weightOwner !== undefined;
    const trainsOwnWeights = hasWeights && !frozen;
    // A layer analysis could not read keeps its inputs' state: unknown is not evidence of a frozen graph.
    const upstreamGrad = (layer.inputs ?? []).some((id) => requiresGrad.has(id));
    if (frozen && w.params > 0) {
      w.frozenParams = w.params;
      w.params = 0;
      w.weightGradBytes = 0;
    }
    if (trainsOwnWeights || upstreamGrad) requiresGrad.add(layer.id);
    if (layer.outputShape === undefined) return;
    if (!trainsOwnWeights && !upstreamGrad) {
      w.backward = 'none';
      w.backwardFlops = 0;
      w.savedActivationBytes = 0;
      delete w.savedFixedBytes;
      savedBy[i] = [];
      return;
    }
    // A parameter-free layer inside a frozen module back-propagates as it would trained.
    if (!frozen || !hasWeights) return;
    w.backward = 'input-gradient';
    const own = frozenBackwards[i];
    if (own) {
      const trained = w.backwardFlops;
      w.backwardFlops = Math.max(0, trained - own.weightGradientFlops);
      w.inputGradientShare = trained > 0 ? w.backwardFlops / trained : 1;
      if (own.savedActivationBytes !== undefined) {
        w.savedActivationBytes = own.savedActivationBytes;
        if (w.savedFixedBytes !== undefined) w.savedFixedBytes = Math.min(w.savedFixedBytes, w.savedActivationBytes);
        savedBy[i] = [];
      }
      return;
    }
    w.inputGradientShare = inputGradientShare(layer.op);
    w.backwardFlops *= w.inputGradientShare;
    if (INPUT_SAVED_FOR_WEIGHT_GRADIENT.has(layer.op)) {
      w.savedActivationBytes = 0;
      delete w.savedFixedBytes;
      savedBy[i] = [];
    }
  });
}
