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
import type { TokenDispatcher } from '../../../protocol/planOptions';
import { allGatherMs, allReduceMs, allToAllMs, groupLink, type Link } from './adapters';
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
 * A collective of the experts' share of a stage's state over the expert-data-parallel group only (Megatron-Core's
 * expert_data_parallel group; the ep ranks of one group hold different experts and exchange no expert state): without
 * ZeRO the gradients' all-reduce, with it their reduce-scatter to the owners or the weights' all-gather (the same ring
 * traffic per byte).
 */
export function expertGroupCollectiveMs(expertBytes: number, zero: ZeroStage, c: ExpertDegrees, edpLink: Link): number {
  if (expertBytes <= 0) return 0;
  const edp = expertDataParallelOf(c);
  if (edp <= 1) return 0;
  return zero >= 1 ? allGatherMs(expertBytes, edp, edpLink) : allReduceMs(expertBytes, edp, edpLink);
}

/**
 * One MoE block's token dispatch and combine, forward and backward, given the bytes of the tokens one rank holds:
 * - all-to-all (GShard, Lepikhin et al., ICLR 2021, §3.2; Megatron-Core's MoEAlltoAllTokenDispatcher): four all-to-alls
 *   over the ep group of each token sent to its top-k experts; at etp > 1 (sequence parallel) each expert tensor group
 *   then gathers its ranks' tokens and reduce-scatters the outputs (gather_from_sequence_parallel_region);
 * - allgather (MoEAllGatherTokenDispatcher, Megatron's default): every rank's tokens gathered over the etp·ep group,
 *   each keeping those its experts take, and the outputs reduce-scattered back, a token's hidden state once whatever k.
 */
export function tokenDispatchMs(localBytes: number, topK: number, c: { tp: number; ep: number; etp: number; sp: boolean }, dispatcher: TokenDispatcher | undefined, links: { ep: Link; etp: Link; tpEp: Link }): number {
  if (dispatcher === 'allgather') return c.ep * c.etp > 1 ? 4 * allGatherMs(localBytes * c.ep * c.etp, c.ep * c.etp, links.tpEp) : 0;
  const routed = localBytes * topK;
  const exchange = c.ep > 1 ? 4 * allToAllMs(routed, c.ep, links.ep) : 0;
  const gather = c.etp > 1 && c.sp ? 4 * allGatherMs(routed * c.etp, c.etp, links.etp) : 0;
  return exchange + gather;
}
