/**
 * How the planner prices a mixture-of-experts block's own kernels, as the experts kernel the model names runs them
 * (core/moe.ts ExpertAttrs.grouped; frontends/huggingface/expertsKernel.ts): grouped experts share one GEMM launch
 * per projection, and the routing is the rows each expert gathers, not the catalogue's tree of splits.
 */
import type { AnalyzedLayer } from '../../core/ir';
import { expertOf, moeOf } from '../../core/moe';
import type { GemmShape, LayerGemms } from './efficiency';

/**
 * How many of a layer's experts one grouped kernel covers on a GPU (its experts' count over the expert-parallel
 * degree), or 1 for a layer that runs alone. A grouped GEMM (torch.nn.functional.grouped_mm, Megatron-Core's
 * GroupedMLP) runs every local expert's tiles in one launch: its efficiency is that of a batch of that many GEMMs,
 * each expert's rows padded to tiles on their own, and its launch is shared by them.
 */
export function expertGroup(layer: AnalyzedLayer, expertParallel = 1): number {
  const expert = expertOf(layer);
  if (!expert?.grouped) return 1;
  return Math.max(1, Math.floor(expert.count / Math.max(1, expertParallel)));
}

/** One expert's GEMMs as the grouped kernel runs them: a batch of `group` such GEMMs, for the efficiency of the whole. */
export function groupedGemms(gemms: LayerGemms | undefined, group: number): LayerGemms | undefined {
  if (!gemms || group === 1) return gemms;
  const batched = (g: GemmShape): GemmShape => ({ ...g, batch: g.batch * group });
  return { ...gemms, forward: batched(gemms.forward), inputGrad: batched(gemms.inputGrad), weightGrad: batched(gemms.weightGrad) };
}

/**
 * The catalogue's intermediate splits of an MoE block's dispatched rows (decoder.ts routedTokens: a tree that hands
 * each expert its section): bookkeeping of the graph, which no implementation runs as a kernel. The rows each expert
 * reads are priced once, at its own gather.
 */
export function routingBookkeeping(layer: AnalyzedLayer): boolean {
  return layer.op === 'split' && moeOf(layer)?.role === 'dispatch';
}

/**
 * An expert's routed rows, gathered out of the dispatched tokens (`hidden_states[token_idx]`, or grouped_mm's one sort
 * by expert): its own rows read and written, not the whole dispatched tensor a plain split is priced to read.
 */
export function gatheredRows(layer: AnalyzedLayer): boolean {
  return layer.op === 'split' && expertOf(layer) !== undefined;
}
