/**
 * Advice on a finished plan: costs the plan pays for how the model's code runs, not for how it is parallelized,
 * said with what the step would save. Reads the plan's own per-layer times; never changes the plan.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanDiagnostic, PlanOutcome } from '../protocol/plan';
import { eagerNormTraffic, isEagerNorm } from './cost/eagerNorm';
import { precisionBytes } from './memory/precision';

/**
 * RMSNorms written in Python (transformers' LlamaRMSNorm and its copies) run one kernel per op on an fp32 copy.
 * Their share of the layers' time, the bytes a fused kernel (one read, one write) would move instead, and the
 * memory the plan leaves out for them.
 */
export function eagerNormAdvice(model: AnalyzedModel, outcome: PlanOutcome): PlanDiagnostic | undefined {
  if (!outcome.feasible) return undefined;
  const eagerLayers = model.layers.filter(isEagerNorm);
  // Matched by name: a norm module called twice (`norm`, `norm#2`) is two layers of one name, both counted.
  const eager = new Set(eagerLayers.map((l) => l.name));
  if (eager.size === 0) return undefined;
  let all = 0;
  let norms = 0;
  for (const l of outcome.plan.layers) {
    const ms = l.forwardMs + l.backwardMs;
    all += ms;
    if (eager.has(l.name)) norms += ms;
  }
  if (!(all > 0)) return undefined;
  const bytes = precisionBytes(outcome.plan.setup?.precision ?? 'fp32').activation;
  const traffic = eagerNormTraffic(eagerLayers[0]!, bytes)!;
  const percent = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
  return {
    severity: 'info',
    message:
      `${eagerLayers.length} RMSNorm layer${eagerLayers.length === 1 ? '' : 's'} run as eager fp32 ops (${traffic.forwardKernels} kernels forward, ${traffic.backwardKernels} backward, ` +
      `${traffic.forwardBytesPerElement} and ${traffic.backwardBytesPerElement} bytes per element): ${percent(norms / all)} of the layers' time. ` +
      `A fused kernel (torch.compile, or a fused RMSNorm module) moves ${2 * bytes} and ${4 * bytes}. ` +
      // Counting it would reject runs published to fit (torchtitan's Llama 2 13B on 80 GB): the memory model is said to leave it out.
      'The fp32 copy each such norm keeps for its backward (4 bytes per element) is not counted in activation memory',
  };
}

/** The plan with its advice appended. */
export function withAdvice(model: AnalyzedModel, outcome: PlanOutcome): PlanOutcome {
  const advice = eagerNormAdvice(model, outcome);
  return advice ? { ...outcome, diagnostics: [...outcome.diagnostics, advice] } : outcome;
}
