/**
 * Where a block's routed experts live on one pipeline stage's GPUs, apart from the dense layers' layout. Megatron-Core
 * lays the experts out on their own ("MoE parallel folding", parallel_state.py's expert rank generator, order
 * tp-ep-dp): each expert's GEMMs split over `etp` ranks (--expert-tensor-parallel-size, which defaults to the
 * attention's --tensor-model-parallel-size), `ep` such groups hold one copy of every expert, and the rest replicate
 * them as the expert-data-parallel group, tp·cp·dp ÷ (etp·ep) ranks. torchtitan supports etp = tp and etp = 1
 * (`expert_tensor_parallel_degree`, default 1). At etp < tp the expert group reaches across the attention's tensor
 * ranks: each of them dispatches its own sequence-parallel share of the tokens to whole experts.
 */
import type { ZeroStage } from '../../../protocol/plan';
import { allGatherMs, allReduceMs, groupLink, type Link } from './adapters';
import type { ClusterSpec } from '../../cluster/spec';

/** The degrees the expert layout follows from: a configuration's, or a block cost's. */
export interface ExpertDegrees {
  tp: number;
  cp: number;
  dp: number;
  ep: number;
  /** Expert tensor parallel; absent: the attention's tp (Megatron's default). */
  etp?: number;
}

/** The ranks each expert's GEMMs are split over. */
export function expertTensorOf(c: Pick<ExpertDegrees, 'tp' | 'etp'>): number {
  return c.etp ?? c.tp;
}

/** The ranks of a stage holding the same experts, whose expert gradients are reduced together (Megatron's expert-data-parallel group). */
export function expertDataParallelOf(c: ExpertDegrees): number {
  const group = c.tp * c.cp * c.dp;
  const held = expertTensorOf(c) * c.ep;
  return group % held === 0 ? group / held : 1;
}

/**
 * Whether the experts' degrees fit the stage's ranks: the expert tensor group divides the attention's (both
 * Megatron's and torchtitan's layouts put it inside), and the expert-parallel groups tile tp·cp·dp ranks.
 */
export function expertLayoutFits(c: ExpertDegrees): boolean {
  const etp = expertTensorOf(c);
  return c.tp % etp === 0 && (c.tp * c.cp * c.dp) % (etp * c.ep) === 0;
}

/**
 * Of the ranks ZeRO shards the dense state over (`shards`: dp·cp, or one node's members under HSDP), those an expert's
 * state is sharded over: the shard group widened by the attention's tensor ranks an expert spans whole (tp ÷ etp),
 * divided among the ep groups that each hold it once.
 */
export function expertShardsOver(shards: number, c: ExpertDegrees): number {
  const widened = shards * (c.tp / expertTensorOf(c));
  if (c.ep === 1 && widened === shards) return shards;
  return widened % c.ep === 0 ? widened / c.ep : 1;
}

export interface ExpertLinks {
  /** The expert-parallel group: ranks etp apart (tp-ep order), so at etp < tp it spans the attention's tensor ranks first. */
  ep: Link;
  /** The expert tensor group: consecutive ranks, inside the attention's tensor group. */
  etp: Link;
  /** The expert-data-parallel group: ranks etp·ep apart. */
  edp: Link;
  /** The expert tensor and expert-parallel groups together, etp·ep consecutive ranks: Megatron's allgather dispatcher gathers over it. */
  tpEp: Link;
}

export function expertLinksOf(cluster: ClusterSpec, gpusPerNode: number, c: ExpertDegrees): ExpertLinks {
  const etp = expertTensorOf(c);
  return {
    ep: groupLink(cluster, gpusPerNode, c.ep, etp),
    etp: groupLink(cluster, gpusPerNode, etp, 1),
    edp: groupLink(cluster, gpusPerNode, expertDataParallelOf(c), etp * c.ep),
    tpEp: groupLink(cluster, gpusPerNode, etp * c.ep, 1),
  };
}

/**
 * The experts' share of a stage's gradient sync: their gradients are reduced over the expert-data-parallel group
 * only (Megatron-Core's expert_data_parallel group; the ep ranks of one group hold different experts and exchange no
 * expert gradient). An all-reduce without ZeRO, a reduce-scatter to the owners with it.
 */
export function expertGradSyncMs(expertGradientBytes: number, zero: ZeroStage, c: ExpertDegrees, edpLink: Link): number {
  const edp = expertDataParallelOf(c);
  if (edp <= 1 || expertGradientBytes <= 0) return 0;
  return zero >= 1 ? allGatherMs(expertGradientBytes, edp, edpLink) : allReduceMs(expertGradientBytes, edp, edpLink);
}
