/**
 * DeepSeek-V2 and DeepSeek-V3 (transformers' modeling_deepseek_v2.py, ≥ 4.52, and modeling_deepseek_v3.py, ≥ 4.51;
 * before those, the checkpoints' own modeling_deepseek.py, which has the same modules and names): Llama's pre-norm
 * decoder (RMSNorm, SwiGLU, rotary positions, untied head) with two changes.
 *
 * Multi-head Latent Attention (DeepseekV2Attention, DeepseekV3Attention):
 * - queries through a low-rank bottleneck when q_lora_rank is set, q_a_proj (hidden → q_lora_rank) → q_a_layernorm →
 *   q_b_proj (→ heads·(qk_nope_head_dim + qk_rope_head_dim)); a plain q_proj when it is null (DeepSeek-V2-Lite);
 * - keys and values from one compressed latent: kv_a_proj_with_mqa (hidden → kv_lora_rank + qk_rope_head_dim); its
 *   first kv_lora_rank features go through kv_a_layernorm and kv_b_proj (→ heads·(qk_nope_head_dim + v_head_dim)) and
 *   split into each head's rope-free key part and its value; its last qk_rope_head_dim features are one rotary key
 *   shared by every head (`k_rot.expand`, materialised by the concatenation that follows);
 * - each query and key head is its rope-free part and its rotated part side by side, qk_nope + qk_rope wide, while the
 *   values are v_head_dim wide: DeepSeek-V3's scores come from 192-wide heads, its attention output from 128-wide ones
 *   (with flash_attention_2 transformers pads the values to 192 and slices the output; WAP prices the 128);
 * - o_proj: heads·v_head_dim → hidden. q_a_proj, kv_a_proj_with_mqa and o_proj have a bias when attention_bias;
 *   q_proj, q_b_proj and kv_b_proj never do.
 *
 * DeepSeekMoE (DeepseekV2Moe, DeepseekV3MoE), through decoder.ts's sparseMoe: on layer i ≥ first_k_dense_replace,
 * n_routed_experts experts of moe_intermediate_size (mlp.experts.E.{gate,up,down}_proj), top num_experts_per_tok, plus
 * the n_shared_experts shared experts as one MLP of n_shared_experts · moe_intermediate_size (mlp.shared_experts) on
 * every token; the first_k_dense_replace layers before keep a dense MLP of intermediate_size. The checkpoints' code
 * also asks i % moe_layer_freq == 0 (1 in every released config; transformers' own classes do not read it). V2 scores
 * experts with a softmax, V3 with a sigmoid. V3's router (DeepseekV3TopkRouter) holds `e_score_correction_bias` as a
 * buffer (register_buffer: moved by load statistics, not gradients), so it is no parameter; the checkpoints' code
 * makes it an nn.Parameter, n_routed_experts more per MoE layer (14,848 for V3). Group-limited top-k (n_group,
 * topk_group), the top-k renormalisation and routed_scaling_factor are element-wise ops on E or k numbers a token,
 * not priced; the routers' fp32 matmul is priced at the model's precision.
 *
 * Multi-token prediction: DeepSeek-V3's checkpoint holds num_nextn_predict_layers MTP modules (model.layers.61: one
 * more MoE decoder layer with eh_proj, enorm, hnorm and its own embedding and head copies), which transformers does
 * not build (DeepseekV3Model ignores `model\.layers\.61.*` on load): the model it trains has the num_hidden_layers
 * layers only, and WAP builds that one and says so.
 */
import { diagnosticAt, type Attrs } from '../../core/ir';
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import { dims, gatedMlp, lmHead, sparseMoe, type BuildContext, type DecoderDims } from './decoder';
import type { HfGraph } from './graph';
import { mergeHeads, rotary, splitHeads } from './heads';

/** The latent attention's sizes (DeepseekV3Config: qk_head_dim = qk_nope_head_dim + qk_rope_head_dim). */
interface LatentDims {
  heads: number;
  /** q_lora_rank, or undefined when the queries come from a plain q_proj (q_lora_rank null). */
  queryRank?: number;
  latentRank: number;
  nope: number;
  rope: number;
  value: number;
  bias: boolean;
  dropout: number;
  /** The scores' factor when it is not 1/√(qk_nope + qk_rope) (DeepSeek-V3 under YaRN). */
  scale?: number;
}

function latentDims(config: HfConfig, heads: number): LatentDims {
  const positive = (key: string): number => {
    const v = intField(config, key);
    if (v === 0) throw new Error(`config field '${key}' must be positive`);
    return v;
  };
  const queryRank = config.q_lora_rank === null || config.q_lora_rank === undefined ? undefined : positive('q_lora_rank');
  const nope = intField(config, 'qk_nope_head_dim');
  const rope = positive('qk_rope_head_dim');
  const scale = config.model_type === 'deepseek_v3' ? yarnScale(config, nope + rope) : undefined;
  return {
    heads, queryRank, latentRank: positive('kv_lora_rank'), nope, rope, value: positive('v_head_dim'), bias: boolField(config, 'attention_bias', false),
    dropout: rateField(config, 'attention_dropout'), ...(scale !== undefined ? { scale } : {}),
  };
}

/**
 * DeepseekV3Attention's softmax scale: qk_head_dim^-0.5, times mscale² when rope_scaling has a mscale_all_dim, with
 * yarn_get_mscale(factor, mscale_all_dim) = 0.1 · mscale_all_dim · ln(factor) + 1 (1 for factor ≤ 1). transformers'
 * DeepseekV2Attention keeps qk_head_dim^-0.5. A scale changes no cost; the sdpa node carries it as the code sets it.
 */
function yarnScale(config: HfConfig, qkHeadDim: number): number | undefined {
  const scaling = config.rope_scaling ?? config.rope_parameters;
  if (!scaling || typeof scaling !== 'object' || Array.isArray(scaling)) return undefined;
  const { mscale_all_dim: allDim, factor } = scaling as Record<string, unknown>;
  if (typeof allDim !== 'number' || allDim === 0 || typeof factor !== 'number') return undefined;
  const mscale = factor <= 1 ? 1 : 0.1 * allDim * Math.log(factor) + 1;
  return qkHeadDim ** -0.5 * mscale * mscale;
}

/** One section of `torch.split(x, sizes, dim=-1)`. */
function lastDimPart(g: HfGraph, name: string, x: string, sizes: number[], index: number): string {
  return g.add(name, 'torch.split', 'split', { axis: -1, sizes, index }, [x]);
}

/** DeepseekV2Attention / DeepseekV3Attention on the normed hidden states [T, hidden]; returns o_proj's output. */
function latentAttention(g: HfGraph, prefix: string, x: string, hidden: number, m: LatentDims): string {
  const qkHead = m.nope + m.rope;
  const q = m.queryRank === undefined
    ? g.linear(`${prefix}.q_proj`, hidden, m.heads * qkHead, false, x)
    : g.linear(`${prefix}.q_b_proj`, m.queryRank, m.heads * qkHead, false, g.norm(`${prefix}.q_a_layernorm`, m.queryRank, 'rmsnorm', g.linear(`${prefix}.q_a_proj`, hidden, m.queryRank, m.bias, x)));
  const qHeads = splitHeads(g, prefix, 'q', q, { heads: m.heads, kvHeads: m.heads, headDim: qkHead }, 1);
  const qPass = lastDimPart(g, `${prefix}.q_pass`, qHeads, [m.nope, m.rope], 0);
  const qRot = rotary(g, `${prefix}.q`, lastDimPart(g, `${prefix}.q_rot`, qHeads, [m.nope, m.rope], 1));

  const compressed = g.linear(`${prefix}.kv_a_proj_with_mqa`, hidden, m.latentRank + m.rope, m.bias, x);
  const latent = g.norm(`${prefix}.kv_a_layernorm`, m.latentRank, 'rmsnorm', lastDimPart(g, `${prefix}.k_pass`, compressed, [m.latentRank, m.rope], 0));
  const kvHeads = splitHeads(g, prefix, 'kv', g.linear(`${prefix}.kv_b_proj`, m.latentRank, m.heads * (m.nope + m.value), false, latent), { heads: m.heads, kvHeads: m.heads, headDim: m.nope + m.value }, 1);
  const kNope = lastDimPart(g, `${prefix}.k_nope`, kvHeads, [m.nope, m.value], 0);
  const value = lastDimPart(g, `${prefix}.value_states`, kvHeads, [m.nope, m.value], 1);
  // k_rot.view(b, 1, T, rope): one key head, rotated once, then expanded to every head (a view: no copy of its own).
  const kRotOne = g.add(`${prefix}.k_rot_view`, 'view', 'reshape', { shape: [1, -1, m.rope] }, [lastDimPart(g, `${prefix}.k_rot`, compressed, [m.latentRank, m.rope], 1)]);
  const kRotated = rotary(g, `${prefix}.k`, kRotOne);
  const kRot = g.add(`${prefix}.k_rot_expand`, 'expand', 'concat', { axis: 1 }, Array.from({ length: m.heads }, () => kRotated));

  const query = g.add(`${prefix}.query_states`, 'torch.cat', 'concat', { axis: -1 }, [qPass, qRot]);
  const key = g.add(`${prefix}.key_states`, 'torch.cat', 'concat', { axis: -1 }, [kNope, kRot]);
  const attrs: Attrs = { causal: true, heads: m.heads, kvHeads: m.heads, dropout: m.dropout, ...(m.scale !== undefined ? { scale: m.scale } : {}) };
  const attended = g.add(`${prefix}.sdpa`, 'scaled_dot_product_attention', 'sdpa', attrs, [query, key, value]);
  const merged = mergeHeads(g, prefix, attended, { heads: m.heads, kvHeads: m.heads, headDim: m.value });
  return g.linear(`${prefix}.o_proj`, m.heads * m.value, hidden, m.bias, merged);
}

/**
 * Layer i's MLP: DeepSeekMoE where the modeling file puts one (n_routed_experts set, i ≥ first_k_dense_replace, and
 * the checkpoints' i % moe_layer_freq == 0), the dense MLP of intermediate_size before. DeepseekV2MLP has
 * `bias=config.mlp_bias` (experts and shared experts are DeepseekV2MLPs too); DeepseekV3MLP has none.
 */
function deepseekMlp(ctx: BuildContext, prefix: string, layer: number, x: string, d: DecoderDims, act: string): string {
  const { config } = ctx;
  const v3 = config.model_type === 'deepseek_v3';
  const bias = !v3 && boolField(config, 'mlp_bias', false);
  const routed = intField(config, 'n_routed_experts', 0);
  const frequency = intField(config, 'moe_layer_freq', 1);
  const sparse = routed > 0 && layer >= intField(config, 'first_k_dense_replace', 0) && frequency > 0 && layer % frequency === 0;
  if (!sparse) return gatedMlp(ctx, prefix, x, d, act, bias);
  const width = intField(config, 'moe_intermediate_size');
  const sharedCount = intField(config, 'n_shared_experts', 0);
  return sparseMoe(ctx, prefix, x, d, act, {
    experts: routed, topK: intField(config, 'num_experts_per_tok'), intermediate: width, names: ['gate_proj', 'up_proj', 'down_proj'], bias,
    scoring: v3 ? 'sigmoid' : 'softmax', ...(sharedCount > 0 ? { shared: { name: 'shared_experts', intermediate: sharedCount * width } } : {}),
  });
}

/** What of the checkpoint or its config the built model leaves as transformers leaves it, said once per model. */
function noteUnbuilt(g: HfGraph, config: HfConfig, type: string, layers: number): void {
  const mtp = intField(config, 'num_nextn_predict_layers', 0);
  if (mtp > 0) {
    const message = `${type}: the checkpoint holds ${mtp} multi-token-prediction module${mtp === 1 ? '' : 's'} (model.layers.${layers}${mtp > 1 ? `–${layers + mtp - 1}` : ''}, num_nextn_predict_layers) that transformers does not build (DeepseekV3Model ignores those weights on load); WAP plans the ${layers}-layer model transformers trains, without ${mtp === 1 ? 'it' : 'them'}`;
    g.diagnostics.push(diagnosticAt('info', 'hf-mtp-layers', message, g.range));
  }
  const frequency = intField(config, 'moe_layer_freq', 1);
  if (frequency > 1) {
    const message = `${type}: moe_layer_freq ${frequency}: WAP puts a mixture of experts on the layers from first_k_dense_replace whose index is a multiple of ${frequency}, as the checkpoint's modeling_deepseek.py (trust_remote_code) builds them; transformers' own ${type === 'deepseek_v3' ? 'DeepseekV3' : 'DeepseekV2'} classes ignore moe_layer_freq and put one on every layer from there`;
    g.diagnostics.push(diagnosticAt('info', 'hf-moe-layer-freq', message, g.range));
  }
}

export function buildDeepseek(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const type = String(config.model_type);
  const d = dims(config);
  const latent = latentDims(config, d.heads);
  const act = strField(config, 'hidden_act', 'silu');
  const base = ctx.head === 'base' ? '' : 'model.';
  noteUnbuilt(g, config, type, d.layers);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids);
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    const attended = latentAttention(g, `${p}.self_attn`, g.norm(`${p}.input_layernorm`, d.hidden, 'rmsnorm', h), d.hidden, latent);
    const r1 = g.sum(`${p}.residual_attn`, [h, attended]);
    const mlp = deepseekMlp(ctx, `${p}.mlp`, i, g.norm(`${p}.post_attention_layernorm`, d.hidden, 'rmsnorm', r1), d, act);
    h = g.sum(`${p}.residual_mlp`, [r1, mlp]);
  }
  h = g.norm(`${base}norm`, d.hidden, 'rmsnorm', h);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
}
