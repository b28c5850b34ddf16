/**
 * Mixture-of-experts attributes as the frontends write them (ops.ts): an expert's own layers carry
 * `expert: {index, count}`; the router, dispatch and combine carry `moe: {experts, topK, role}`.
 * One reader for both, so the planner does not guess at attribute names.
 */
export interface ExpertAttrs {
  index: number;
  count: number;
  /**
   * The experts of this layer's block run together, one grouped GEMM per projection over every expert a GPU holds
   * (transformers' experts_implementation "grouped_mm", Megatron-Core's GroupedMLP), not one GEMM each in a loop.
   */
  grouped?: true;
}

export type MoeRole = 'router' | 'dispatch' | 'combine';

export interface MoeAttrs {
  experts: number;
  topK: number;
  role: MoeRole;
}

type WithAttrs = { attrs?: unknown };

function record(layer: WithAttrs, key: string): Record<string, unknown> | undefined {
  const attrs = layer.attrs as Record<string, unknown> | undefined;
  const v = attrs?.[key];
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
}

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** The expert this layer belongs to, when it is one expert's own layer. */
export function expertOf(layer: WithAttrs): ExpertAttrs | undefined {
  const e = record(layer, 'expert');
  if (!e || !positive(e.count) || typeof e.index !== 'number') return undefined;
  return { index: e.index, count: e.count, ...(e.grouped === true ? { grouped: true as const } : {}) };
}

/** The routing role of a layer of a mixture-of-experts block (router, dispatch, combine). */
export function moeOf(layer: WithAttrs): MoeAttrs | undefined {
  const m = record(layer, 'moe');
  if (!m || !positive(m.experts) || !positive(m.topK)) return undefined;
  return m.role === 'router' || m.role === 'dispatch' || m.role === 'combine' ? { experts: m.experts, topK: m.topK, role: m.role } : undefined;
}

/** Experts of the block a layer belongs to or routes for; 0 for a dense layer. */
export function expertCount(layer: WithAttrs): number {
  return expertOf(layer)?.count ?? moeOf(layer)?.experts ?? 0;
}
