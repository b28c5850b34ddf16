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
 *   renormalisation (norm_topk_prob) is an element-wise op on k numbers a token, not priced.
 */
import { boolField, intField, rateField, strField, type HfConfig, type HfHead } from './configs';
import type { HfGraph } from './graph';
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
 * A sparse MoE block (Mixtral's, Qwen3-MoE's). Each token goes to its top-k experts; assuming balanced routing,
 * every expert sees T·k/E tokens. The dispatch (tokens copied per chosen expert, T·k rows) and combine (the k
 * expert outputs of a token summed with its routing weights) are shaping nodes; the router and each expert's
 * gate, up and down projections are layers marked with `moe` / `expert` attrs so the planner can place experts
 * (expert parallelism). `layout` names them as the model's modeling file does.
 */
interface MoeLayout {
  experts: number;
  topK: number;
  /** Each expert's MLP width. */
  intermediate: number;
  /** gate, up, down: Mixtral's w1, w3, w2; Qwen3-MoE's gate_proj, up_proj, down_proj. */
  names: [string, string, string];
}

function sparseMoe(ctx: BuildContext, prefix: string, x: string, d: DecoderDims, act: string, layout: MoeLayout): string {
  const g = ctx.graph;
  const { experts, topK, intermediate, names } = layout;
  if (experts < 1 || topK < 1 || topK > experts) throw new Error(`${String(ctx.config.model_type)} needs 1 ≤ num_experts_per_tok (${topK}) ≤ its expert count (${experts})`);
  const moe = { experts, topK };
  const logits = g.linear(`${prefix}.gate`, d.hidden, experts, false, x, { moe: { ...moe, role: 'router' } });
  g.add(`${prefix}.routing_weights`, 'softmax', 'activation', { fn: 'softmax', axis: -1, moe: { ...moe, role: 'router' } }, [logits]);
  const copies = Array.from({ length: topK }, () => x);
  const dispatched = topK === 1 ? x : g.add(`${prefix}.dispatch`, 'index_select', 'concat', { axis: 1, moe: { ...moe, role: 'dispatch' } }, copies);
  const outs: string[] = [];
  for (let e = 0; e < experts; e++) {
    const p = `${prefix}.experts.${e}`;
    const expert = { index: e, count: experts };
    const tokens = g.add(`${p}.tokens`, 'routed tokens', 'split', { axis: 1, chunks: experts, index: e, expert }, [dispatched]);
    const gate = g.linear(`${p}.${names[0]}`, d.hidden, intermediate, false, tokens, { expert });
    const up = g.linear(`${p}.${names[1]}`, d.hidden, intermediate, false, tokens, { expert });
    const a = g.add(`${p}.act_fn`, act, 'activation', { fn: act === 'silu' ? 'silu' : act, expert }, [gate]);
    const m = g.add(`${p}.mul`, 'mul', 'mul', { expert }, [a, up]);
    outs.push(g.linear(`${p}.${names[2]}`, intermediate, d.hidden, false, m, { expert }));
  }
  const gathered = experts === 1 ? outs[0] : g.add(`${prefix}.gather`, 'index_add', 'concat', { axis: 1, moe: { ...moe, role: 'combine' } }, outs);
  if (topK === 1) return gathered;
  const parts = Array.from({ length: topK }, (_, i) => g.add(`${prefix}.combine_${i}`, 'routed outputs', 'split', { axis: 1, chunks: topK, index: i, moe: { ...moe, role: 'combine' } }, [gathered]));
  return g.sum(`${prefix}.combine`, parts);
}

/**
 * The MLP of decoder layer i: Mixtral's block_sparse_moe everywhere; Qwen3-MoE's sparse block where
 * modeling_qwen3_moe.py puts one (not in mlp_only_layers, num_experts > 0, (i + 1) % decoder_sparse_step == 0), its
 * dense gated MLP of intermediate_size elsewhere; the gated MLP for the rest of the family.
 */
function decoderMlp(ctx: BuildContext, layer: number, x: string, d: DecoderDims, act: string, bias: boolean): string {
  const { config } = ctx;
  const p = `${ctx.head === 'base' ? '' : 'model.'}layers.${layer}`;
  const type = String(config.model_type);
  if (type === 'mixtral') {
    return sparseMoe(ctx, `${p}.block_sparse_moe`, x, d, act, { experts: intField(config, 'num_local_experts'), topK: intField(config, 'num_experts_per_tok'), intermediate: d.intermediate, names: ['w1', 'w3', 'w2'] });
  }
  if (type === 'qwen3_moe') {
    const experts = intField(config, 'num_experts', 0);
    const step = intField(config, 'decoder_sparse_step', 1);
    const denseOnly = Array.isArray(config.mlp_only_layers) && config.mlp_only_layers.includes(layer);
    if (!denseOnly && experts > 0 && step > 0 && (layer + 1) % step === 0) {
      return sparseMoe(ctx, `${p}.mlp`, x, d, act, { experts, topK: intField(config, 'num_experts_per_tok'), intermediate: intField(config, 'moe_intermediate_size'), names: ['gate_proj', 'up_proj', 'down_proj'] });
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
  const qkvBias = type === 'qwen2' ? true : boolField(config, 'attention_bias', false);
  const oBias = type === 'qwen2' ? false : boolField(config, 'attention_bias', false);
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
  else if ((type === 'qwen2' || type === 'qwen3' || type === 'qwen3_moe') && boolField(config, 'use_sliding_window', false)) {
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
