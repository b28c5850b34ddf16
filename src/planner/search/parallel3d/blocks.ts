/**
 * Finds the repeated block of a model (a transformer's layer, stacked L times):
 * the longest run of consecutive, identical layer groups, where "identical"
 * means equal workload signatures (the fields of src/core/signature.ts). The 3D search solves that block once
 * and multiplies; layers before it (embeddings) go to the first pipeline
 * stage, layers after it (final norm, head) to the last.
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../../core/ir';
import { product } from '../../../core/ir';
import { expertCount, expertOf, moeOf } from '../../../core/moe';

export interface BlockStructure {
  /** Index of the first layer of the first block. */
  start: number;
  /** Layers per block. */
  period: number;
  /** Blocks in the stack. */
  repeats: number;
  /** The first block's layers (its twins cost the same). */
  block: AnalyzedLayer[];
  /** Layers before the stack (first stage) and after it (last stage). */
  prefix: AnalyzedLayer[];
  suffix: AnalyzedLayer[];
  /** Share of the model's forward FLOPs inside the stack. */
  flopsCovered: number;
}

/** What tensor/context/expert parallelism may split in a block. */
export interface BlockShape {
  /** Attention heads (0 when the block has no attention). */
  heads: number;
  /** Feature width of the residual stream (the block's input). */
  hidden: number;
  /** Tokens per sample (the block input's time dim). */
  seq: number;
  /** Every Linear's in/out features: tensor parallel must divide them. */
  linearDims: number[];
  /** Residual branches (attention, MLP): one tensor-parallel all-reduce each per pass (Megatron). */
  residualBranches: number;
  /**
   * Of those, MoE branches whose tokens only the expert dispatcher moves: under sequence parallelism the router reads
   * each rank's own tokens, so the branch runs no residual all-gather or reduce-scatter of its own. A branch with a
   * shared expert keeps them: Megatron-Core's SharedExpertMLP gathers its sequence-parallel input as a dense MLP does.
   */
  dispatchedBranches?: number;
  /** Experts per MoE layer when the frontend reports them (core/moe.ts); 0 otherwise. */
  experts: number;
}

/**
 * Signature ids per layer. Wiring is left out on purpose: the first block of a
 * stack often reads the embedding through a different edge (a skip from the
 * input rather than from the previous block) while running the same kernels.
 */
function layerKeys(model: AnalyzedModel): number[] {
  const ids = new Map<string, number>();
  return model.layers.map((l) => {
    // layerSignature's fields (op, attrs, input shapes) without its key sorting: attrs of one model come from one
    // frontend pass in one key order, and plain JSON is several times cheaper on thousands of layers.
    // A frozen layer (input gradient only, or no backward upstream of anything trained) or a quantized one (its weight
    // dequantized before each matmul) costs differently from its twin.
    const key = `${l.op}|${JSON.stringify(l.attrs ?? {})}|${(l.inputShapes ?? []).map((x) => x.join('x')).join(',')}|${l.workload.backward ?? ''}|${l.quantizedWeights?.format ?? ''}`;
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    return id;
  });
}

/**
 * Periods worth trying: the distances from each layer to the next and the
 * second-next layer with the same signature (a block's period is one of them
 * unless every layer in it occurs three or more times per block).
 */
function candidatePeriods(keys: number[]): number[] {
  const seen = new Map<number, number[]>();
  const out = new Set<number>();
  keys.forEach((k, i) => {
    const at = seen.get(k) ?? [];
    if (at.length >= 1) out.add(i - at[at.length - 1]);
    if (at.length >= 2) out.add(i - at[at.length - 2]);
    at.push(i);
    seen.set(k, at);
  });
  return [...out].filter((p) => p <= keys.length / 2).sort((a, b) => a - b);
}

/**
 * The (start, period, repeats) with at least two repeats of a block that does work (parameters) covering the most
 * forward FLOPs, then the most layers: one linear scan per candidate period. By FLOPs, because a model may hold two
 * stacks: a vision-language model's tower has more layers than its language model (Qwen2.5-VL's 32 vision blocks
 * against 28 decoder layers) but a fiftieth of its compute, and the language model is the stack to plan by.
 */
export function findBlocks(model: AnalyzedModel): BlockStructure | undefined {
  const keys = layerKeys(model);
  const L = keys.length;
  // flopsBefore[i]: forward FLOPs of layers [0, i).
  const flopsBefore = [0];
  for (const l of model.layers) flopsBefore.push(flopsBefore[flopsBefore.length - 1] + l.workload.forwardFlops);
  const doesWork = (start: number, period: number): boolean => model.layers.slice(start, start + period).some((l) => l.workload.params > 0 || (l.workload.frozenParams ?? 0) > 0);
  let best: { start: number; period: number; repeats: number; flops: number } | undefined;
  for (const period of candidatePeriods(keys)) {
    let run = 0;
    for (let i = 0; i + period <= L; i++) {
      const same = i + period < L && keys[i] === keys[i + period];
      if (same) {
        run++;
        continue;
      }
      // keys[i-run .. i+period) is periodic: floor((run+period)/period) repeats starting at i-run.
      const repeats = Math.floor((run + period) / period);
      const start = i - run;
      const covered = repeats * period;
      const flops = flopsBefore[start + covered] - flopsBefore[start];
      const better = !best || flops > best.flops || (flops === best.flops && (covered > best.repeats * best.period || (covered === best.repeats * best.period && period < best.period)));
      // A block must do real work: a run of identical activations is not a transformer layer.
      if (repeats >= 2 && better && doesWork(start, period)) best = { start, period, repeats, flops };
      run = 0;
    }
  }
  if (!best) return undefined;
  const { start, period, repeats } = best;
  const end = start + period * repeats;
  const total = flopsBefore[L];
  return { start, period, repeats, block: model.layers.slice(start, start + period), prefix: model.layers.slice(0, start), suffix: model.layers.slice(end), flopsCovered: total > 0 ? best.flops / total : 0 };
}

export function isAttention(l: AnalyzedLayer): boolean {
  return l.op === 'mha' || l.op === 'sdpa';
}

function headsOf(l: AnalyzedLayer): number {
  const attrs = l.attrs as Record<string, unknown>;
  if (l.op === 'mha') return Number(attrs.numHeads) || 1;
  // sdpa on (heads, T, d): the heads are the leading dims.
  const q = l.inputShapes[0] ?? [];
  return q.length > 2 ? product(q.slice(0, -2)) : 1;
}

export function blockShape(s: BlockStructure): BlockShape {
  const first = s.block[0];
  const input = first.inputShapes[0] ?? first.outputShape ?? [];
  const attention = s.block.filter(isAttention);
  const linearDims: number[] = [];
  for (const l of s.block) {
    if (l.op !== 'linear' || keptWholeUnderTensorParallel(l)) continue;
    const a = l.attrs as Record<string, unknown>;
    for (const v of [a.inFeatures, a.outFeatures]) if (typeof v === 'number') linearDims.push(v);
  }
  let experts = 0;
  for (const l of s.block) experts = Math.max(experts, expertCount(l));
  return {
    heads: attention.length > 0 ? Math.min(...attention.map(headsOf)) : 0,
    hidden: input.length > 0 ? input[input.length - 1] : 1,
    seq: input.length >= 2 ? input[input.length - 2] : 1,
    linearDims,
    ...residualBranchesOf(s.block),
    experts,
  };
}

/**
 * The adds that close a residual branch: each takes the residual stream (the block's input, then the last such add,
 * or a norm of it, as post-norm BERT's second branch reads its first's LayerNorm). Counting every add counted a
 * rotary embedding's two (q, k) and an MoE combine as branches: a Llama block paid four tensor-parallel all-reduces
 * per pass where Megatron runs two.
 */
function residualBranchesOf(block: readonly AnalyzedLayer[]): { residualBranches: number; dispatchedBranches: number } {
  const inside = new Set(block.map((l) => l.id));
  let stream = new Set(block.flatMap((l) => l.inputs).filter((i) => !inside.has(i)));
  let branches = 0;
  let dispatched = 0;
  let branchStart = 0;
  for (let i = 0; i < block.length; i++) {
    const l = block[i]!;
    if (l.op === 'layernorm' && l.inputs.some((x) => stream.has(x))) stream.add(l.id);
    if (l.op !== 'add' || !l.inputs.some((x) => stream.has(x))) continue;
    branches++;
    const branch = block.slice(branchStart, i);
    const router = branch.findIndex((b) => moeOf(b)?.role === 'router');
    // Dense linears after the router but inside its branch are a shared expert, tensor-parallel as an MLP.
    if (router >= 0 && !branch.slice(router + 1).some((b) => b.op === 'linear' && !expertOf(b) && !keptWholeUnderTensorParallel(b))) dispatched++;
    stream = new Set([l.id]);
    branchStart = i + 1;
  }
  return branches > 0 ? { residualBranches: branches, dispatchedBranches: dispatched } : { residualBranches: 1, dispatchedBranches: 0 };
}

/**
 * Linears tensor parallelism leaves whole on every rank: an MoE router (Megatron-Core's TopKRouter holds its weight
 * unsplit) and a per-token gate the frontend marks so (Qwen2-MoE's Linear(hidden, 1) shared_expert_gate, which
 * Megatron-Core's shared-expert MLP also keeps whole). Their widths (60 experts, 1) need not divide by the degree.
 */
export function keptWholeUnderTensorParallel(l: AnalyzedLayer): boolean {
  return moeOf(l)?.role === 'router' || (l.attrs as Record<string, unknown>).keptWholeUnderTensorParallel === true;
}

/**
 * Structure decides the search: a stack of at least two identical blocks with
 * attention, holding most of the compute, is a transformer the 3D search
 * solves block by block; everything else (CNNs, small MLPs) keeps the
 * per-layer search.
 */
export function repeatedTransformer(model: AnalyzedModel): BlockStructure | undefined {
  const s = findBlocks(model);
  if (!s || !s.block.some(isAttention) || s.flopsCovered < 0.5) return undefined;
  return s;
}
