/** Per-layer entries, one-line descriptions and "fits only through" notes for a 3D plan. */
import type { AnalyzedModel } from '../../../core/ir';
import type { LayerPlan, StrategyKind } from '../../../protocol/plan';
import { offloadText } from '../../../protocol/setupText';
import { mb } from '../../cost/memory';
import { activationBytes, gradientBytes } from './adapters';
import { groupCost } from './blockCost';
import { isAttention } from './blocks';
import { degreesOf, estimate, linksFor, type EstimateContext } from './estimate';
import { shardsOf } from './sharding';
import { offloadSaving } from '../setupLadder';
import type { Scored } from './search';
import type { Config3D } from './estimate';

export function describe3d(c: Config3D): string {
  const parts = [`DP${c.dp}`, `TP${c.tp}${c.sp ? '+SP' : ''}`, `PP${c.pp}${c.v > 1 ? `×${c.v}v` : ''}`];
  if (c.cp > 1) parts.push(`CP${c.cp}`);
  if (c.ep > 1) parts.push(`EP${c.ep}`);
  const extras = [c.zero > 0 ? `ZeRO-${c.zero}${c.hsdp ? ' HSDP' : ''}` : '', offloadText({ cpuOffload: !!c.offload, paramOffload: !!c.paramOffload }) ?? '', c.recompute !== 'none' ? `${c.recompute} recompute` : '', `micro-batch ${c.mb}`].filter(Boolean);
  return `${parts.join('×')} (${extras.join(', ')})`;
}

function strategyOf(c: Config3D): StrategyKind {
  if (c.pp > 1) return 'pipeline';
  if (c.tp > 1) return c.dp * c.cp > 1 ? 'hybrid' : 'model';
  return 'data';
}

/** Stage of each block: contiguous runs per stage, or round-robin chunks under interleaving. */
export function blockStages(c: Config3D, repeats: number): number[] {
  const out: number[] = [];
  if (c.v > 1) {
    const chunk = repeats / (c.pp * c.v);
    for (let b = 0; b < repeats; b++) out.push(Math.floor(b / chunk) % c.pp);
    return out;
  }
  c.blocksPerStage.forEach((k, s) => {
    for (let i = 0; i < k; i++) out.push(s);
  });
  return out;
}

export function layerPlans3d(ctx: EstimateContext, scored: Scored, model: AnalyzedModel): LayerPlan[] {
  const c = scored.config;
  const { structure } = ctx;
  const perStage = c.n / c.pp;
  // One device list per stage, shared by its layers: a 3,072-GPU plan lists each GPU once per stage, not once per layer.
  const stageDevices = Array.from({ length: c.pp }, (_, s) => Array.from({ length: perStage }, (_, i) => s * perStage + i));
  const stages = blockStages(c, structure.repeats);
  const links = linksFor(ctx, c);
  const env = { gpu: ctx.gpu, precision: ctx.precision, ...(ctx.ampStyle ? { ampStyle: ctx.ampStyle } : {}), modelDtypeBytes: ctx.modelDtypeBytes, shape: ctx.shape, tpLink: links.tp, cpLink: links.cp, epLink: links.ep, etpLink: links.etp, tpEpLink: links.tpEp, ...(ctx.tokenDispatcher ? { dispatcher: ctx.tokenDispatcher } : {}), attention: ctx.attention };
  const deg = degreesOf(c);
  const perLayer = new Map<string, ReturnType<typeof groupCost>>();
  const costOf = (i: number) => {
    const l = model.layers[i];
    const inBlock = i >= structure.start && i < structure.start + structure.period * structure.repeats;
    const twin = inBlock ? structure.block[(i - structure.start) % structure.period] : l;
    let g = perLayer.get(twin.id);
    if (!g) perLayer.set(twin.id, (g = groupCost([twin], deg, env, false)));
    return { g, inBlock };
  };
  const end = structure.start + structure.period * structure.repeats;
  const gradBytes = gradientBytes(ctx.precision, ctx.ampStyle);
  const strategy = strategyOf(c);
  return model.layers.map((l, i) => {
    const { g } = costOf(i);
    const stage = i < structure.start ? 0 : i >= end ? c.pp - 1 : stages[Math.floor((i - structure.start) / structure.period)];
    const split = l.op === 'linear' || l.op === 'embedding' || isAttention(l);
    const block = i >= structure.start && i < end ? Math.floor((i - structure.start) / structure.period) : -1;
    const where = block >= 0 ? `block ${block + 1} of ${structure.repeats}` : i < structure.start ? 'before the block stack' : 'after the block stack';
    const tpNote = c.tp > 1 ? (split ? `${isAttention(l) ? 'heads' : 'features'} split ${c.tp} ways inside a node` : c.sp ? `sequence split ${c.tp} ways (sequence parallel)` : `replicated on the ${c.tp} tensor-parallel GPUs`) : 'whole on each GPU';
    return {
      name: l.name,
      line: l.range.line,
      type: l.type,
      strategy,
      dataDegree: c.dp,
      modelDegree: split ? c.tp : 1,
      devices: stageDevices[stage],
      stage,
      ...(c.tp > 1 && split ? { splitDim: isAttention(l) ? ('heads' as const) : ('outputs' as const) } : {}),
      forwardMs: g.forwardMs * c.microBatches,
      backwardMs: g.backwardMs * c.microBatches,
      allreduceBytes: g.params * gradBytes,
      allreduceMs: 0,
      transferMs: 0,
      memoryBytesPerGpu: scored.est.memory.total,
      params: l.workload.params,
      activationBytes: l.workload.activationBytes,
      costSource: { kind: 'analytical' },
      reason: `${where}, pipeline stage ${stage + 1} of ${c.pp}: ${tpNote}; ${describe3d(c)}`,
    };
  });
}

/** When the plan fits only through ZeRO or recompute: which, and what it costs per step. */
export function fitsThrough(ctx: EstimateContext, scored: Scored): string | undefined {
  const c = scored.config;
  if (c.zero === 0 && c.recompute === 'none' && !c.offload) return undefined;
  const plain = estimate(ctx, { ...c, zero: 0, recompute: 'none', hsdp: false, offload: false, paramOffload: false }, false);
  if (plain.fits) return undefined;
  const means: string[] = [];
  if (c.zero > 0) means.push(`ZeRO-${c.zero} (sharded over ${shardsOf(ctx, c)} data-parallel ranks${c.hsdp ? ' inside each node, replicated across nodes (HSDP)' : ''})`);
  if (c.recompute !== 'none') means.push(`${c.recompute} activation recompute`);
  const offload = offloadSaving({ cpuOffload: c.offload, paramOffload: c.paramOffload });
  if (offload) means.push(offload);
  const extra = scored.est.stepMs - plain.stepMs;
  const cost = extra > 0 ? `they cost +${extra.toFixed(1)} ms per step` : 'they cost no step time here (the sharded sync is as fast as the all-reduce it replaces)';
  return `${means.join(' and ')}: without them it needs ${mb(plain.memory.total)} per GPU; ${cost}`;
}
