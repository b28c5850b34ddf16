/**
 * The head layout HfGraph.attention builds (graph.ts, which uses these too), for the builders that write their own attention core between
 * the views: GPT-OSS's sinks rescale the attention output per head (gptOss.ts), Phi rotates only part of each head
 * (phi.ts). Under grouped-query attention (kvHeads < heads) the query heads are laid out [kv, group, T, d] and the key
 * and value heads [kv, 1, T, d], so broadcasting gives repeat_kv's products without its copy; without grouping every
 * role is [heads, T, d]. The token count stays -1 in the views, so a user's --input sequence length flows through.
 */
import type { HfGraph } from './graph';

/** The heads an attention splits into, and how many query heads share each key/value head. */
export interface HeadLayout {
  heads: number;
  kvHeads: number;
  headDim: number;
}

const grouped = (s: HeadLayout): boolean => s.heads !== s.kvHeads;

/**
 * `x.view(T, n, d).transpose`: a projection's [T, width] as heads, `${prefix}.${role}_view` then `_transpose`.
 * Queries pass perKv = heads / kvHeads, keys and values 1.
 */
export function splitHeads(g: HfGraph, prefix: string, role: string, x: string, s: HeadLayout, perKv: number): string {
  const viewed = g.add(`${prefix}.${role}_view`, 'view', 'reshape', { shape: grouped(s) ? [-1, s.kvHeads, perKv, s.headDim] : [-1, s.kvHeads, s.headDim] }, [x]);
  return g.add(`${prefix}.${role}_transpose`, 'transpose', 'permute', { dims: grouped(s) ? [0, 2, 3, 1, 4] : [0, 2, 1, 3] }, [viewed]);
}

/** `attn_output.transpose(1, 2).reshape(T, heads·d)`: the heads merged back for the output projection. */
export function mergeHeads(g: HfGraph, prefix: string, attended: string, s: HeadLayout): string {
  const back = g.add(`${prefix}.out_transpose`, 'transpose', 'permute', { dims: grouped(s) ? [0, 3, 1, 2, 4] : [0, 2, 1, 3] }, [attended]);
  return g.add(`${prefix}.out_view`, 'reshape', 'reshape', { shape: [-1, s.heads * s.headDim] }, [back]);
}

/**
 * apply_rotary_pos_emb on split heads: x·cos + rotate_half(x)·sin, element-wise and parameter-free, as
 * HfGraph.attention prices it (rotate_half's negate-and-concat copy counted in the sin product).
 */
export function rotary(g: HfGraph, prefix: string, x: string): string {
  return g.sum(`${prefix}_rotary`, [g.mul(`${prefix}_rotary_cos`, [x]), g.mul(`${prefix}_rotary_sin`, [x])]);
}
