/**
 * How a transformers MoE model runs its experts: transformers 5's ExpertsInterface (docs "Experts backends",
 * experts_interface.md) offers "eager" (a loop over the experts that received tokens, one GEMM per expert and
 * projection, as every 4.x release ran them), "grouped_mm" (tokens sorted by expert, then one
 * torch.nn.functional.grouped_mm per projection; PyTorch ≥ 2.9) and "batched_mm" (expert weights copied per token,
 * one torch.bmm). From transformers 5 grouped_mm is the default where PyTorch provides it (huggingface/transformers
 * #42697, "make grouped_mm the default when possible"); `from_pretrained(..., experts_implementation=…)` picks one,
 * and transformers keeps it as config._experts_implementation.
 *
 * WAP cannot see which transformers and PyTorch the run installs, so a model that names none is priced as the
 * current default runs it, grouped, and the plan says so with the keyword that prices the loop instead.
 */
import { diagnosticAt } from '../../core/ir';
import type { HfConfig } from './configs';
import type { HfGraph } from './graph';

export interface ExpertsKernel {
  /** One grouped GEMM per projection over a GPU's experts (the expert layers' `expert.grouped`). */
  grouped: boolean;
}

const NOTE = 'hf-experts-kernel';

/** The experts kernel the config names (or the default), said once per model on its graph. */
export function expertsKernel(config: HfConfig, g: HfGraph): ExpertsKernel {
  const named = config._experts_implementation ?? config.experts_implementation;
  const said = g.diagnostics.some((d) => d.code === NOTE);
  const say = (severity: 'info' | 'warning', message: string, incomplete = false): void => {
    if (said) return;
    const d = diagnosticAt(severity, NOTE, message, g.range);
    g.diagnostics.push(incomplete ? { ...d, incomplete: true } : d);
  };
  if (named === 'eager') {
    say('info', 'experts_implementation "eager": each expert runs its own GEMMs in a loop, as transformers 4.x ran every MoE model; priced so');
    return { grouped: false };
  }
  if (named === 'grouped_mm') {
    say('info', 'experts_implementation "grouped_mm": each projection of the experts runs as one grouped GEMM over the tokens sorted by expert; priced so');
    return { grouped: true };
  }
  if (named === 'batched_mm') {
    say('warning', 'experts_implementation "batched_mm" copies each chosen expert\'s weights per token for one torch.bmm; WAP prices one grouped GEMM per projection instead and leaves those per-token weight copies out of memory and time', true);
    return { grouped: true };
  }
  if (typeof named === 'string') {
    say('warning', `experts_implementation "${named}" is not one WAP knows (eager, grouped_mm, batched_mm); priced as grouped_mm, transformers 5's default`, true);
    return { grouped: true };
  }
  say('info', 'no experts_implementation named: the experts are priced as transformers 5 runs them by default where PyTorch ≥ 2.9 provides torch.nn.functional.grouped_mm, one grouped GEMM per projection; transformers 4.x, and experts_implementation="eager", loop over the experts one GEMM each (pass that keyword to from_pretrained to price the loop)');
  return { grouped: true };
}
