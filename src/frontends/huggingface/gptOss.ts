/**
 * GPT-OSS (transformers' modeling_gpt_oss.py, ≥ 4.55; OpenAI's gpt-oss-20b and gpt-oss-120b, model card
 * arXiv:2508.10925):
 *   model.embed_tokens → model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj + self_attn.sinks,
 *   post_attention_layernorm, mlp.{router, experts}} → model.norm → lm_head (untied)
 * A pre-norm decoder with RMSNorms (a weight each) and rotary positions (YaRN scaling changes no cost), and:
 * - attention with a bias on q/k/v/o_proj (config.attention_bias, True by default: 4.55's GptOssConfig.__init__ sets it
 *   True whatever it is given, later releases honour the field), grouped-query heads (64 query, 8 key/value, head_dim 64 in both checkpoints), and a learned sink per
 *   query head, `self_attn.sinks` = nn.Parameter(torch.empty(num_attention_heads)): eager attention appends it to every
 *   score row as one more logit, softmaxes the T + 1 columns and drops the sink's. Each output row is then the plain
 *   softmax attention's times Σ/(Σ + e^sink) = sigmoid(lse − sink), which is how a kernel with sinks applies it (one
 *   rescale of its output tile by the sink's share). WAP builds it so: the sdpa node, then `sink_rescale`, a product
 *   with the [heads] parameter broadcast per head, heads·T·d multiplies a sample, 1/(4T) of the attention's
 *   matmul FLOPs over the full score matrix. The factor itself (heads·T exponentials and divides, the sink's softmax column) is below that
 *   product and has no node of its own;
 * - alternating attention: layer_types' 'sliding_attention' layers (the even ones by default) see sliding_window
 *   (128) keys, the others everything (slidingWindow.ts prices a window only where the code's kernel skips it);
 * - a mixture of experts on every layer (GptOssMLP): the router `mlp.router`, a Linear(hidden, E) with a bias, its
 *   top num_experts_per_tok logits softmaxed (priced as one softmax over the E logits: E = 32 or 128 numbers a token,
 *   no matmul); then each chosen expert, built through decoder.ts's sparseMoe. torch holds the E experts as one
 *   tensor per parameter, mlp.experts.gate_up_proj [E, hidden, 2·intermediate] with gate_up_proj_bias
 *   [E, 2·intermediate], and down_proj [E, intermediate, hidden] with down_proj_bias [E, hidden]; WAP's graph keeps
 *   one layer per expert so expert parallelism can place them and a grouped kernel can price them, and layer
 *   `mlp.experts.e.gate_up_proj` is slice [e] of gate_up_proj and of gate_up_proj_bias (`down_proj` likewise).
 *   An expert (GptOssExperts.forward): gate_up = x @ gate_up_proj[e] + bias; gate, up = gate_up[..., ::2],
 *   gate_up[..., 1::2] (interleaved); gate clamped above at swiglu_limit (7), up to ±swiglu_limit;
 *   glu = gate · sigmoid(1.702 · gate); out = ((up + 1) · glu) @ down_proj[e] + bias. Every op there is an eager
 *   kernel of its own, and each is a node here.
 *
 * What WAP does not model: the checkpoints store the experts' weights in MXFP4 (config.json's quantization_config,
 * `*_blocks` and `*_scales` tensors). Training runs on them dequantized (transformers' Mxfp4Config(dequantize=True)),
 * so WAP prices every weight at the plan's precision and says so when the config carries a quantization_config.
 */
import { diagnosticAt, type Attrs } from '../../core/ir';
import { boolField, intField, rateField, type HfConfig } from './configs';
import { dims, lmHead, sparseMoe, type BuildContext, type DecoderDims } from './decoder';
import type { HfGraph } from './graph';
import { mergeHeads, rotary, splitHeads } from './heads';
import { layerWindows, windowedLayers } from './slidingWindow';

/** GptOssExperts' sigmoid gain: `self.alpha = 1.702` in 4.55 (later releases read config.swiglu_alpha, same default). */
const GLU_ALPHA_DEFAULT = 1.702;

/** GptOssConfig's swiglu_limit default: the clamp GptOssExperts applies before its GLU. */
const GLU_LIMIT_DEFAULT = 7.0;

/**
 * GptOssAttention on the normed hidden states: biased q/k/v projections, rotary heads, sdpa over the window the layer
 * sees, the sinks' per-head rescale, o_proj. Returns o_proj's output.
 */
function sinkAttention(ctx: BuildContext, prefix: string, x: string, d: DecoderDims, bias: boolean, window: number | undefined): string {
  const g = ctx.graph;
  const layout = { heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim };
  const group = d.heads / d.kvHeads;
  const q = g.linear(`${prefix}.q_proj`, d.hidden, d.heads * d.headDim, bias, x);
  const k = g.linear(`${prefix}.k_proj`, d.hidden, d.kvHeads * d.headDim, bias, x);
  const v = g.linear(`${prefix}.v_proj`, d.hidden, d.kvHeads * d.headDim, bias, x);
  const qh = rotary(g, `${prefix}.q`, splitHeads(g, prefix, 'q', q, layout, group));
  const kh = rotary(g, `${prefix}.k`, splitHeads(g, prefix, 'k', k, layout, 1));
  const vh = splitHeads(g, prefix, 'v', v, layout, 1);
  const sdpaAttrs: Attrs = { causal: true, heads: d.heads, kvHeads: d.kvHeads, dropout: rateField(ctx.config, 'attention_dropout'), ...(window !== undefined ? { window } : {}) };
  const attended = g.add(`${prefix}.sdpa`, 'scaled_dot_product_attention', 'sdpa', sdpaAttrs, [qh, kh, vh]);
  // One learned logit per query head, laid out as the heads are so it broadcasts over each head's T × d output.
  const sinks = g.add(`${prefix}.sinks`, 'nn.Parameter', 'parameter', { shape: [d.heads] }, []);
  const perHead = g.add(`${prefix}.sinks_view`, 'view', 'reshape', { shape: group === 1 ? [d.heads, 1, 1] : [d.kvHeads, group, 1, 1] }, [sinks]);
  const rescaled = g.mul(`${prefix}.sink_rescale`, [attended, perHead]);
  return g.linear(`${prefix}.o_proj`, d.heads * d.headDim, d.hidden, bias, mergeHeads(g, prefix, rescaled, layout));
}

/** A positive number field (the clamp limit), or the class's default when the config does not state it. */
function positiveField(config: HfConfig, key: string, fallback: number): number {
  const v = config[key] ?? fallback;
  if (typeof v !== 'number' || !(v > 0)) throw new Error(`config field '${key}' must be a positive number, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * One GPT-OSS expert on its routed rows (GptOssExperts.forward's loop body), every node carrying the expert's attrs.
 * Its gate and up halves are strided views of gate_up (`::2`, `1::2`), priced as the expert's sections of it.
 */
function clampedGluExpert(g: HfGraph, d: DecoderDims, alpha: number, limit: number): (prefix: string, rows: string, attrs: Attrs) => string {
  return (p, rows, attrs) => {
    const I = d.intermediate;
    const gateUp = g.linear(`${p}.gate_up_proj`, d.hidden, 2 * I, true, rows, attrs);
    const gate = g.add(`${p}.gate`, 'gate_up[..., ::2]', 'split', { axis: -1, sizes: [I, I], index: 0, ...attrs }, [gateUp]);
    const up = g.add(`${p}.up`, 'gate_up[..., 1::2]', 'split', { axis: -1, sizes: [I, I], index: 1, ...attrs }, [gateUp]);
    const gateClamped = g.add(`${p}.gate_clamp`, 'Tensor.clamp', 'activation', { fn: 'clamp', max: limit, ...attrs }, [gate]);
    const upClamped = g.add(`${p}.up_clamp`, 'Tensor.clamp', 'activation', { fn: 'clamp', min: -limit, max: limit, ...attrs }, [up]);
    const scaled = g.add(`${p}.gate_alpha`, 'mul', 'mul', { factor: alpha, ...attrs }, [gateClamped]);
    const sigmoid = g.add(`${p}.gate_sigmoid`, 'torch.sigmoid', 'activation', { fn: 'sigmoid', ...attrs }, [scaled]);
    const glu = g.add(`${p}.glu`, 'mul', 'mul', attrs, [gateClamped, sigmoid]);
    // `up + 1`: one op per element with a constant, which the catalogue prices alike as add or mul. It is kept off op
    // 'add', which the 3D search reads as a residual branch (one tensor-parallel all-reduce each, parallel3d/blocks.ts).
    const upPlusOne = g.add(`${p}.up_plus_one`, 'add (up + 1)', 'mul', attrs, [upClamped]);
    const gated = g.add(`${p}.gated_output`, 'mul', 'mul', attrs, [upPlusOne, glu]);
    return g.linear(`${p}.down_proj`, I, d.hidden, true, gated, attrs);
  };
}

/**
 * What of the config WAP does not build, said once per model: a checkpoint quantization (the Hub files' MXFP4
 * experts), and that transformers has no sdpa path for sinks, so its attention runs eager unless the code names a
 * kernel that takes them.
 */
function noteUnmodelled(g: HfGraph, config: HfConfig): void {
  const quantization = config.quantization_config;
  if (quantization && typeof quantization === 'object' && !Array.isArray(quantization)) {
    const method = (quantization as Record<string, unknown>).quant_method;
    const named = typeof method === 'string' ? ` (quant_method '${method}')` : '';
    const message = `gpt_oss: the config carries a quantization_config${named}, the checkpoint's stored format (MXFP4 experts for the released ones), which WAP does not model: it prices every weight at the plan's precision, as the model trains once dequantized (transformers' Mxfp4Config(dequantize=True))`;
    g.diagnostics.push(diagnosticAt('info', 'hf-checkpoint-quantization', message, g.range));
  }
  const kernel = config._attn_implementation ?? config.attn_implementation;
  if (kernel === undefined || kernel === null || kernel === 'eager') {
    // GptOssPreTrainedModel: _supports_sdpa = False (torch's sdpa takes no sink), so from_pretrained falls back to eager.
    const message = 'gpt_oss: transformers runs GPT-OSS attention eager unless the code loads it with a kernel that takes sinks (torch sdpa takes none); eager writes the scores with their sink column to memory: --attention unfused prices that, the default prices a fused kernel';
    g.diagnostics.push(diagnosticAt('info', 'hf-attention-kernel', message, g.range));
  }
}

export function buildGptOss(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = dims(config);
  const bias = boolField(config, 'attention_bias', true);
  const base = ctx.head === 'base' ? '' : 'model.';
  noteUnmodelled(g, config);
  // GptOssConfig: layer_types defaults to 'sliding_attention' where (i + 1) % 2, the even layers.
  const windowOf = layerWindows(g, config, 'gpt_oss', windowedLayers(config, d.layers, (i) => i % 2 === 0), d.layers, ctx.seqLen);
  const experts = intField(config, 'num_local_experts');
  const expert = clampedGluExpert(g, d, positiveField(config, 'swiglu_alpha', GLU_ALPHA_DEFAULT), positiveField(config, 'swiglu_limit', GLU_LIMIT_DEFAULT));

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids);
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    const attended = sinkAttention(ctx, `${p}.self_attn`, g.norm(`${p}.input_layernorm`, d.hidden, 'rmsnorm', h), d, bias, windowOf(i));
    const r1 = g.sum(`${p}.residual_attn`, [h, attended]);
    const normed = g.norm(`${p}.post_attention_layernorm`, d.hidden, 'rmsnorm', r1);
    // The experts are `expert`'s clamped GLU, not sparseMoe's gated MLP: its activation and names go unread (hidden_act
    // 'silu' in the released configs is no input of GptOssExperts either).
    const mlp = sparseMoe(ctx, `${p}.mlp`, normed, d, 'silu', {
      experts, topK: intField(config, 'num_experts_per_tok'), intermediate: d.intermediate, names: ['gate_up_proj', 'gate_up_proj', 'down_proj'],
      router: { name: 'router', bias: true }, expert,
    });
    h = g.sum(`${p}.residual_mlp`, [r1, mlp]);
  }
  h = g.norm(`${base}norm`, d.hidden, 'rmsnorm', h);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
}
