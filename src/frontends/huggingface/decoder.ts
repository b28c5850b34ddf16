/**
 * The Llama family of decoder-only transformers: llama, mistral, mixtral,
 * qwen2, qwen3 and gemma share modeling_llama.py's layout
 *   model.embed_tokens → model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
 *   post_attention_layernorm, mlp.{gate,up,down}_proj} → model.norm → lm_head
 * with RMSNorm (a weight, no bias), rotary position embeddings (no parameters;
 * element-wise products on the query and key heads), grouped-query attention when
 * num_key_value_heads < num_attention_heads, and a SwiGLU MLP. What differs:
 * - qwen2: q/k/v projections have a bias (modeling_qwen2.py, `bias=True`);
 * - qwen3: no bias unless attention_bias (then on o_proj too), head_dim from the config, and a per-head RMSNorm
 *   on the queries and keys (self_attn.q_norm / k_norm, head_dim weights) before the rotary embeddings
 *   (modeling_qwen3.py, Qwen3Attention);
 * - gemma: embeddings scaled by √hidden, GeGLU (gelu tanh) MLP, head_dim 256, tied head;
 * - mixtral: the MLP is a sparse mixture of experts (block_sparse_moe.gate + experts.E.{w1,w2,w3});
 * - qwen3_moe: qwen3's attention, and a sparse mixture of experts (mlp.gate + mlp.experts.E.{gate,up,down}_proj of
 *   moe_intermediate_size) on the layers decoder_sparse_step and mlp_only_layers leave it; the top-k weights'
 *   renormalisation (norm_topk_prob) is an element-wise op on k numbers a token, not priced;
 * - qwen2_moe: qwen2's attention (q/k/v bias: `bias=True`, later `config.qkv_bias`, default True) and qwen3_moe's
 *   sparse layers with a shared expert every token passes through, mlp.shared_expert (a gated MLP of
 *   shared_expert_intermediate_size) scaled by sigmoid(mlp.shared_expert_gate(x)), a Linear(hidden, 1)
 *   (modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock).
 */
import type { Attrs } from '../../core/ir';
import { boolField, intField, rateField, strField, type HfConfig, type HfHead } from './configs';
import type { HfGraph } from './graph';
import { expertsKernel } from './expertsKernel';
import { layerWindows, windowedLayers } from './slidingWindow';

export interface BuildContext {
  graph: HfGraph;
  config: HfConfig;
  head: HfHead;
  /** Tokens per sample the graph is built for: the config's context length (the analysis may replace it: `--seq-len`). */
  seqLen: number;
}

export interface DecoderDims {
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  layers: number;
  vocab: number;
}

/** The sizes every Llama-layout decoder reads from its config (head_dim defaults to hidden / heads, as transformers'). */
export function dims(config: HfConfig): DecoderDims {
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  const kvHeads = intField(config, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) throw new Error(`num_attention_heads ${heads} is not a multiple of num_key_value_heads ${kvHeads}`);
  const headDim = intField(config, 'head_dim', Math.floor(hidden / heads));
  return { hidden, heads, kvHeads, headDim, intermediate: intField(config, 'intermediate_size'), layers: intField(config, 'num_hidden_layers'), vocab: intField(config, 'vocab_size') };
}

/** The gated MLP: down_proj(act(gate_proj(x)) · up_proj(x)), SwiGLU with silu, GeGLU with a GELU. */
export function gatedMlp(ctx: BuildContext, prefix: string, x: string, d: DecoderDims, act: string, bias: boolean): string {
  const g = ctx.graph;
  const gate = g.linear(`${prefix}.gate_proj`, d.hidden, d.intermediate, bias, x);
  const up = g.linear(`${prefix}.up_proj`, d.hidden, d.intermediate, bias, x);
  const activated = g.act(`${prefix}.act_fn`, act, gate);
  const product = g.mul(`${prefix}.mul`, [activated, up]);
  return g.linear(`${prefix}.down_proj`, d.intermediate, d.hidden, bias, product);
}

/**
 * A sparse MoE block (Mixtral's, Qwen2-MoE's, Qwen3-MoE's, DeepSeek's). Each token goes to its top-k experts; assuming
 * balanced routing, every expert sees T·k/E tokens. The dispatch (tokens copied per chosen expert, T·k rows) and
 * combine (the k expert outputs of a token summed with its routing weights) are shaping nodes; the router and each
 * expert's gate, up and down projections are layers marked with `moe` / `expert` attrs so the planner can place
 * experts (expert parallelism). Shared experts see every token: a dense gated MLP beside the routed ones, not marked
 * as experts (they are replicated, not spread). `layout` names them as the model's modeling file does.
 */
export interface MoeLayout {
  experts: number;
  topK: number;
  /** Each expert's MLP width. */
  intermediate: number;
  /** gate, up, down: Mixtral's w1, w3, w2; the others' gate_proj, up_proj, down_proj. */
  names: [string, string, string];
  /** Whether the experts' projections have a bias (DeepseekV2MLP's `bias=config.mlp_bias`); none elsewhere. */
  bias?: boolean;
  /**
   * What turns the router's logits into scores: softmax (Mixtral, Qwen, DeepSeek-V2) or sigmoid (DeepSeek-V3's
   * DeepseekV3TopkRouter). Either is one element-wise pass over the T×E logits.
   */
  scoring?: 'softmax' | 'sigmoid';
  shared?: SharedExperts;
  /**
   * The router's module and bias where they are not the `gate` without one of Mixtral, Qwen and DeepSeek: GPT-OSS's
   * GptOssTopKRouter is `router`, a weight and a bias (F.linear(x, weight, bias)).
   */
  router?: { name: string; bias: boolean };
  /**
   * Builds one expert on its routed rows where it is not the gated MLP `names` spells (GPT-OSS's fused gate_up_proj
   * and clamped GLU, gptOss.ts). `prefix` is the expert's module path, `attrs` the `expert` attrs every layer it adds
   * carries; it returns the expert's output rows.
   */
  expert?: (prefix: string, rows: string, attrs: Attrs) => string;
}

/** The expert(s) every token passes through besides its routed ones, as one gated MLP. */
export interface SharedExperts {
  /** The module under the MoE block: DeepSeek's `shared_experts`, Qwen2-MoE's `shared_expert`. */
  name: string;
  /** Its MLP width: DeepSeek's moe_intermediate_size · n_shared_experts, Qwen2-MoE's shared_expert_intermediate_size. */
  intermediate: number;
  /** Qwen2-MoE's `shared_expert_gate`: the shared output is scaled by sigmoid(Linear(hidden, 1)(x)) per token. */
  gate?: string;
}

/** The prime factors of n, largest first (60 → 5, 3, 2, 2). */
function primeFactors(n: number): number[] {
  const factors: number[] = [];
  for (let p = 2; p * p <= n; p++) for (; n % p === 0; n /= p) factors.push(p);
  if (n > 1) factors.push(n);
  return factors.reverse();
}

/**
 * Each expert's share of the dispatched rows, as nested splits: a split node takes torch.chunk's sections (ceil-sized,
 * the last shorter, fewer than asked when the rows run out), so one E-way chunk of T·k rows loses experts whenever
 * T·k is not close to a multiple of E (Qwen1.5-MoE's 60 experts at top-4 keep 57 of 60 at 256 tokens). Splitting by
 * E's prime factors, largest first, gives every expert a section whenever T·k ≥ E and T·k ≥ E·(p − 1), p the largest
 * factor (checked for every E ≤ 300), each within a few rows of T·k/E (16 to 18 for those 60 experts' 17.07); the
 * sections add up to T·k, so the experts' FLOPs stay exactly those of T·k routed rows.
 */
function routedTokens(g: HfGraph, prefix: string, dispatched: string, moe: { experts: number; topK: number }, grouped: boolean): string[] {
  const factors = primeFactors(moe.experts);
  let groups = [{ id: dispatched, first: 0 }];
  let size = moe.experts;
  for (const [level, factor] of factors.entries()) {
    size /= factor;
    const last = level === factors.length - 1;
    groups = groups.flatMap(({ id, first }) =>
      Array.from({ length: factor }, (_, i) => {
        const from = first + i * size;
        const expert = { index: from, count: moe.experts, ...(grouped ? { grouped: true } : {}) };
        const name = last ? `${prefix}.experts.${from}.tokens` : `${prefix}.routed_tokens.${from}-${from + size - 1}`;
        const attrs: Attrs = { axis: 1, chunks: factor, index: i, ...(last ? { expert } : { moe: { ...moe, role: 'dispatch' } }) };
        return { id: g.add(name, 'routed tokens', 'split', attrs, [id]), first: from };
      }),
    );
  }
  return groups.map((x) => x.id);
}

export function sparseMoe(ctx: BuildContext, prefix: string, x: string, d: DecoderDims, act: string, layout: MoeLayout): string {
  const g = ctx.graph;
  const { experts, topK, intermediate, names } = layout;
  const bias = layout.bias ?? false;
  if (experts < 1 || topK < 1 || topK > experts) throw new Error(`${String(ctx.config.model_type)} needs 1 ≤ num_experts_per_tok (${topK}) ≤ its expert count (${experts})`);
  const moe = { experts, topK };
  const scoring = layout.scoring ?? 'softmax';
  const router = layout.router ?? { name: 'gate', bias: false };
  const logits = g.linear(`${prefix}.${router.name}`, d.hidden, experts, router.bias, x, { moe: { ...moe, role: 'router' } });
  g.add(`${prefix}.routing_weights`, scoring, 'activation', { fn: scoring, ...(scoring === 'softmax' ? { axis: -1 } : {}), moe: { ...moe, role: 'router' } }, [logits]);
  const copies = Array.from({ length: topK }, () => x);
  const dispatched = topK === 1 ? x : g.add(`${prefix}.dispatch`, 'index_select', 'concat', { axis: 1, moe: { ...moe, role: 'dispatch' } }, copies);
  // Grouped or looped, as the run's experts_implementation has it (expertsKernel.ts): the planner prices either.
  const { grouped } = expertsKernel(ctx.config, g);
  const tokens = experts === 1 ? [dispatched] : routedTokens(g, prefix, dispatched, moe, grouped);
  const outs = tokens.map((rows, e) => {
    const p = `${prefix}.experts.${e}`;
    const expert = { index: e, count: experts, ...(grouped ? { grouped: true } : {}) };
    if (layout.expert) return layout.expert(p, rows, { expert });
    const gate = g.linear(`${p}.${names[0]}`, d.hidden, intermediate, bias, rows, { expert });
    const up = g.linear(`${p}.${names[1]}`, d.hidden, intermediate, bias, rows, { expert });
    const a = g.add(`${p}.act_fn`, act, 'activation', { fn: act === 'silu' ? 'silu' : act, expert }, [gate]);
    const m = g.add(`${p}.mul`, 'mul', 'mul', { expert }, [a, up]);
    return g.linear(`${p}.${names[2]}`, intermediate, d.hidden, bias, m, { expert });
  });
  const gathered = experts === 1 ? outs[0] : g.add(`${prefix}.gather`, 'index_add', 'concat', { axis: 1, moe: { ...moe, role: 'combine' } }, outs);
  const routed = topK === 1
    ? gathered
    : g.sum(`${prefix}.combine`, Array.from({ length: topK }, (_, i) => g.add(`${prefix}.combine_${i}`, 'routed outputs', 'split', { axis: 1, chunks: topK, index: i, moe: { ...moe, role: 'combine' } }, [gathered])));
  return layout.shared ? g.sum(`${prefix}.add_shared`, [routed, sharedExperts(ctx, prefix, x, d, act, bias, layout.shared)]) : routed;
}

/** The shared expert(s) on every token, gated per token where the model gates them (Qwen2-MoE). */
function sharedExperts(ctx: BuildContext, prefix: string, x: string, d: DecoderDims, act: string, bias: boolean, shared: SharedExperts): string {
  const g = ctx.graph;
  const out = gatedMlp(ctx, `${prefix}.${shared.name}`, x, { ...d, intermediate: shared.intermediate }, act, bias);
  if (!shared.gate) return out;
  // One number per token: tensor parallelism keeps it whole on every rank (planner/search/parallel3d/blocks.ts).
  const weight = g.act(`${prefix}.${shared.gate}_sigmoid`, 'sigmoid', g.linear(`${prefix}.${shared.gate}`, d.hidden, 1, false, x, { keptWholeUnderTensorParallel: true }), 'F.sigmoid');
  return g.mul(`${prefix}.${shared.name}_gated`, [weight, out]);
}

/**
 * The MLP of decoder layer i: Mixtral's block_sparse_moe everywhere; Qwen2-MoE's and Qwen3-MoE's sparse block where
 * their modeling files put one (not in mlp_only_layers, num_experts > 0, (i + 1) % decoder_sparse_step == 0), their
 * dense gated MLP of intermediate_size elsewhere; the gated MLP for the rest of the family.
 */
function decoderMlp(ctx: BuildContext, layer: number, x: string, d: DecoderDims, act: string, bias: boolean): string {
  const { config } = ctx;
  const p = `${ctx.head === 'base' ? '' : 'model.'}layers.${layer}`;
  const type = String(config.model_type);
  if (type === 'mixtral') {
    return sparseMoe(ctx, `${p}.block_sparse_moe`, x, d, act, { experts: intField(config, 'num_local_experts'), topK: intField(config, 'num_experts_per_tok'), intermediate: d.intermediate, names: ['w1', 'w3', 'w2'] });
  }
  if (type === 'qwen3_moe' || type === 'qwen2_moe') {
    const experts = intField(config, 'num_experts', 0);
    const step = intField(config, 'decoder_sparse_step', 1);
    const denseOnly = Array.isArray(config.mlp_only_layers) && config.mlp_only_layers.includes(layer);
    if (!denseOnly && experts > 0 && step > 0 && (layer + 1) % step === 0) {
      const shared = type === 'qwen2_moe' ? { shared: { name: 'shared_expert', intermediate: intField(config, 'shared_expert_intermediate_size'), gate: 'shared_expert_gate' } } : {};
      return sparseMoe(ctx, `${p}.mlp`, x, d, act, { experts, topK: intField(config, 'num_experts_per_tok'), intermediate: intField(config, 'moe_intermediate_size'), names: ['gate_proj', 'up_proj', 'down_proj'], ...shared });
    }
  }
  return gatedMlp(ctx, `${p}.mlp`, x, d, act, bias);
}

export function buildLlamaFamily(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const type = String(config.model_type);
  const d = dims(config);
  const gemma = type === 'gemma';
  const act = gemma ? strField(config, 'hidden_activation', 'gelu_pytorch_tanh') : strField(config, 'hidden_act', 'silu');
  // Qwen2Attention's q/k/v have `bias=True`; Qwen2MoeConfig later made it `qkv_bias` (default True).
  const qkvBias = type === 'qwen2' ? true : type === 'qwen2_moe' ? boolField(config, 'qkv_bias', true) : boolField(config, 'attention_bias', false);
  const oBias = type === 'qwen2' || type === 'qwen2_moe' ? false : boolField(config, 'attention_bias', false);
  const mlpBias = boolField(config, 'mlp_bias', false);
  const qkNorm = type === 'qwen3' || type === 'qwen3_moe';
  const base = ctx.head === 'base' ? '' : 'model.';
  const windowOf = slidingWindows(ctx, type, d.layers);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids);
  // Gemma multiplies the embeddings by √hidden_size (modeling_gemma.py, `normalizer`).
  if (gemma) h = g.mul(`${base}embed_scale`, [h]);
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    const normed = g.norm(`${p}.input_layernorm`, d.hidden, 'rmsnorm', h);
    const q = g.linear(`${p}.self_attn.q_proj`, d.hidden, d.heads * d.headDim, qkvBias, normed);
    const k = g.linear(`${p}.self_attn.k_proj`, d.hidden, d.kvHeads * d.headDim, qkvBias, normed);
    const v = g.linear(`${p}.self_attn.v_proj`, d.hidden, d.kvHeads * d.headDim, qkvBias, normed);
    const ctxOut = g.attention(`${p}.self_attn`, q, k, v, { heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim, causal: true, rotary: true, qkNorm, dropout: rateField(config, 'attention_dropout'), window: windowOf(i) });
    const o = g.linear(`${p}.self_attn.o_proj`, d.heads * d.headDim, d.hidden, oBias, ctxOut);
    const r1 = g.sum(`${p}.residual_attn`, [h, o]);
    const normed2 = g.norm(`${p}.post_attention_layernorm`, d.hidden, 'rmsnorm', r1);
    const mlp = decoderMlp(ctx, i, normed2, d, act, mlpBias);
    h = g.sum(`${p}.residual_mlp`, [r1, mlp]);
  }
  h = g.norm(`${base}norm`, d.hidden, 'rmsnorm', h);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
}

/**
 * Which layers attend a sliding window, per model type: Mistral's and Mixtral's every layer when sliding_window is
 * set (Mistral-7B v0.1: 4096; later releases null); Qwen2's and Qwen3's from max_window_layers up, only with
 * use_sliding_window (their configs drop the window otherwise, and the released checkpoints leave it off); the
 * Llama and Gemma families none.
 */
function slidingWindows(ctx: BuildContext, type: string, layers: number): (layer: number) => number | undefined {
  const config = ctx.config;
  let byIndex: ((layer: number) => boolean) | undefined;
  if (type === 'mistral' || type === 'mixtral') byIndex = () => true;
  else if ((type === 'qwen2' || type === 'qwen2_moe' || type === 'qwen3' || type === 'qwen3_moe') && boolField(config, 'use_sliding_window', false)) {
    const from = intField(config, 'max_window_layers', 0);
    byIndex = (i) => i >= from;
  }
  return byIndex ? layerWindows(ctx.graph, config, type, windowedLayers(config, layers, byIndex), layers, ctx.seqLen) : () => undefined;
}

/**
 * The LM head (or a classifier) on top of the final hidden states; tied to the input embeddings when the config
 * says so. `onLogits` is what the causal LM's forward does to its logits before the loss (Gemma 2's soft-capping).
 */
export function lmHead(ctx: BuildContext, h: string, hidden: number, vocab: number, embeddingKey: string, name: string, onLogits: (logits: string) => string = (l) => l): string {
  const g = ctx.graph;
  if (ctx.head === 'base') g.field('last_hidden_state', h);
  if (ctx.head === 'causal-lm') {
    const tied = boolField(ctx.config, 'tie_word_embeddings', true);
    // WAP plans training: the step passes labels, and the model's forward computes its loss.
    return g.causalLmLoss(g.field('logits', onLogits(g.linear(name, hidden, vocab, false, h, {}, tied ? embeddingKey : undefined))));
  }
  if (ctx.head === 'sequence-classification') return g.field('logits', g.linear('score', hidden, intField(ctx.config, 'num_labels', 2), false, h));
  return h;
}
