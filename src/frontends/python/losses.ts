/**
 * Loss functions, as modules (`self.loss = nn.CrossEntropyLoss()`, a
 * LightningModule's criterion) and as calls (`F.cross_entropy(logits, y)`),
 * read as the kernels they run on each sample's prediction: the graph is per
 * sample, so the batch mean they end with is outside it, as `x.mean()` without
 * a dim is (reductions.ts). The target comes from the data, not a layer.
 *
 * - cross entropy: log_softmax over the class axis (ATen's cross_entropy is
 *   log_softmax + nll_loss; autograd keeps the log-probabilities, the result
 *   _log_softmax's backward reads), then the pick of each target's entry;
 * - nll: the pick alone (its input is already log-probabilities);
 * - mse: (input − target)²; l1, smooth l1, huber: |input − target|;
 *   bce with logits: softplus; bce: log; kl_div: target·(log target −
 *   input), one elementwise pass priced as exp's; each then averaged over
 *   the sample.
 * The picks and sums are priced as reductions of every element (one read),
 * which a pick of one entry per row is at most.
 */
import type { Attrs, OpKind } from '../../core/ir';
import type { ActivationFn, ReduceFn } from '../../core/ops';
import { recordOp } from './tensorOps';
import type { Interp } from './interpreter';
import type { CallSite, Dims, TensorV, Value } from './values';
import { torchDims } from './batchFolding';
import { withProps } from '../../core/objects';

export type LossKind = 'cross_entropy' | 'nll' | 'mse' | 'l1' | 'bce_logits' | 'bce' | 'kl';

/** torch.nn loss modules by class name. */
export const LOSS_MODULES: Readonly<Record<string, LossKind>> = {
  CrossEntropyLoss: 'cross_entropy', NLLLoss: 'nll', MSELoss: 'mse', L1Loss: 'l1', SmoothL1Loss: 'l1', HuberLoss: 'l1',
  BCEWithLogitsLoss: 'bce_logits', BCELoss: 'bce', KLDivLoss: 'kl',
};

/** torch.nn.functional loss functions by name. */
export const LOSS_FUNCTIONS: Readonly<Record<string, LossKind>> = {
  cross_entropy: 'cross_entropy', nll_loss: 'nll', mse_loss: 'mse', l1_loss: 'l1', smooth_l1_loss: 'l1', huber_loss: 'l1',
  binary_cross_entropy_with_logits: 'bce_logits', binary_cross_entropy: 'bce', kl_div: 'kl',
};

export const isLossFunction = (name: string): boolean => Object.prototype.hasOwnProperty.call(LOSS_FUNCTIONS, name);

/** The loss an nn module class computes, or undefined (own keys only: `nn.constructor` is not a loss). */
export const lossModuleKind = (type: string): LossKind | undefined => (Object.prototype.hasOwnProperty.call(LOSS_MODULES, type) ? LOSS_MODULES[type] : undefined);

/** The elementwise kernel each loss runs on the prediction before it reduces (cross entropy: over the class axis). */
const PER_ELEMENT: Readonly<Record<LossKind, ActivationFn | undefined>> = {
  cross_entropy: 'log_softmax', nll: undefined, mse: 'square', l1: 'abs', bce_logits: 'softplus', bce: 'log', kl: 'exp',
};

/**
 * Records the loss on prediction `x`; `name` is the module's path when a module is called (its final op takes it),
 * `type` what the layer table shows. Returns the per-sample loss (a scalar per sample).
 */
export function recordLoss(interp: Interp, kind: LossKind, x: TensorV, site: CallSite, type: string, name?: string): Value {
  // The module's path names its last op (its output, as a leaf module's is); the kernel before it is `<path>.<fn>`.
  const rec = (op: OpKind, attrs: Attrs, shape: Dims | undefined, input: TensorV, last: boolean): Value =>
    recordOp(interp, { ...(last && name ? { name } : {}), base: last ? (name ?? kind) : `${name ?? kind}.${String(attrs.fn)}`, type, op, attrs, inputs: [input], site, shape });
  // The class axis of (N, C, …) is torch's dim 1; a prediction of rank 1 (one number per sample) has none. After
  // `logits.view(-1, V)` torch's N is the batch times the positions, IR axes 0 and 1 (batchFolding.ts).
  const torchRank = torchDims(x)?.length;
  const classless = torchRank !== undefined && torchRank < 2;
  const fn = kind === 'cross_entropy' && classless ? undefined : PER_ELEMENT[kind];
  const y = fn ? rec('activation', fn === 'log_softmax' ? { fn, axis: x.fold ? 2 : 1 } : { fn }, x.shape, x, false) : x;
  if (y.k !== 'tensor') return y;
  // Summed over the sample, whatever its rank (the core resolves `allAxes` once it knows it).
  const reduceFn: ReduceFn = kind === 'cross_entropy' || kind === 'nll' ? 'sum' : 'mean';
  const loss = rec('reduce', { fn: reduceFn, allAxes: true, keepDims: false }, x.shape ? [x.shape[0]] : undefined, y, true);
  return loss.k === 'tensor' && loss.fold ? withProps(loss, { fold: undefined }) : loss;
}
