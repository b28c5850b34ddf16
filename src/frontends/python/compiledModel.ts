/**
 * `torch.compile(model)`, which the run trains through and WAP reads as the model itself. Inductor fuses the
 * pointwise ops between GEMMs into a few kernels, and AOTAutograd's default partitioner recomputes those ops in the
 * backward instead of saving their outputs (PyTorch docs, "torch.compile"; "Min-cut optimal(*) recomputation",
 * PyTorch dev-discuss, 2022). WAP prices the model as eager PyTorch runs it: one kernel per op, and every tensor
 * autograd saves is kept. A compiled model therefore keeps fewer activations and spends less time on elementwise
 * work than planned. Every plan of the model says so, since its activation memory is an upper bound (nanochat's d20
 * at 32 sequences per GPU fits an 80 GB H100 compiled, where the eager estimate does not).
 */
import type { Interp } from './interpreter';
import { noteForPlans } from './runFacts';
import { statedAt } from './runPrecision';
import type { CallSite } from './values';

export function noteCompiledModel(interp: Interp, path: string, site: CallSite): void {
  if (path !== 'torch.compile' || interp.graph?.scope.length) return;
  const message = `The model is compiled (torch.compile at ${statedAt(interp, site)}): Inductor fuses its pointwise ops and recomputes them in the backward, where WAP prices them as eager PyTorch runs them, so the plan's activation memory and elementwise time are upper bounds`;
  noteForPlans(interp, site.range, message, 'compiled-model', 'info');
}
