/**
 * Gemma 2 (modeling_gemma2.py): Gemma's decoder (embeddings scaled by √hidden, GeGLU MLP with
 * gelu_pytorch_tanh, head_dim from the config, head tied to embed_tokens) with
 * - four RMSNorms per layer, sandwiching each branch: input_layernorm before attention and
 *   post_attention_layernorm on its output before the residual add, pre_feedforward_layernorm and
 *   post_feedforward_layernorm around the MLP (Gemma2DecoderLayer.forward). Gemma2RMSNorm scales by (1 + weight):
 *   one weight of hidden_size, as many parameters as Llama's;
 * - scores scaled by query_pre_attn_scalar^-0.5 instead of head_dim^-0.5 (no cost of its own) and soft-capped,
 *   attn_logit_softcapping · tanh(scores / attn_logit_softcapping), priced on the sdpa node (core/ops.ts);
 * - the LM logits soft-capped the same way with final_logit_softcapping before the loss (Gemma2ForCausalLM):
 *   three element-wise layers over the [T, vocab] logits;
 * - alternate sliding-window layers (the even ones, or config.layer_types), which WAP keeps at full attention
 *   and says so (slidingWindow.ts).
 * Gemma 3's text model (gemma3_text, modeling_gemma3.py) is this decoder with per-head q_norm / k_norm on the query
 * and key heads, no soft-caps (both null in Gemma3TextConfig), and five sliding-window layers to each global one:
 * layer i slides unless (i + 1) % sliding_window_pattern == 0, or as config.layer_types lists them.
 */
import { diagnosticAt } from '../../core/ir';
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import { dims, gatedMlp, lmHead, type BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { layerWindows, windowedLayers } from './slidingWindow';

/** A positive soft-cap from the config, or undefined when it is null (the cap off). */
function capOf(config: HfConfig, key: string): number | undefined {
  const v = config[key];
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'number' || !(v > 0)) throw new Error(`config field '${key}' must be a positive number or null, got ${JSON.stringify(v)}`);
  return v;
}

/** cap · tanh(x / cap) as the modeling file writes it: a divide, tanh and a multiply, each a kernel over x. */
function softcap(g: HfGraph, prefix: string, x: string): string {
  const scaled = g.mul(`${prefix}.softcap_div`, [x]);
  const squashed = g.act(`${prefix}.softcap_tanh`, 'tanh', scaled, 'torch.tanh');
  return g.mul(`${prefix}.softcap_mul`, [squashed]);
}

/** Gemma2RMSNorm: a weight used as (1 + weight), computed on an fp32 copy like the other transformers RMSNorms. */
function gemmaNorm(g: HfGraph, name: string, size: number, x: string): string {
  return g.norm(name, size, 'rmsnorm', x, 'Gemma2RMSNorm');
}

/**
 * Which kernel applies the attention soft-cap decides what it costs: eager attention runs its three passes over the
 * scores (transformers warns to train Gemma 2 with eager), flash-attn ≥ 2.6 applies it inside its tiles, and torch's
 * sdpa path passes no cap at all (integrations/sdpa_attention.py takes no softcap).
 */
function noteAttentionSoftcap(g: HfGraph, cap: number): void {
  const message = `gemma2: every layer soft-caps its attention scores, ${cap}·tanh(scores / ${cap}); with --attention unfused (eager attention, which transformers recommends for training Gemma 2) WAP prices it as three element-wise passes over the scores, under the default fused kernel as in-kernel math (flash-attn ≥ 2.6 applies the cap in its tiles); torch's sdpa path would drop the cap`;
  g.diagnostics.push(diagnosticAt('info', 'hf-softcap', message, g.range));
}

export function buildGemma2(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const gemma3 = config.model_type === 'gemma3_text';
  const type = gemma3 ? 'gemma3_text' : 'gemma2';
  const pattern = intField(config, 'sliding_window_pattern', 6);
  const d = dims(config);
  const act = strField(config, 'hidden_activation', strField(config, 'hidden_act', 'gelu_pytorch_tanh'));
  const attnCap = capOf(config, 'attn_logit_softcapping');
  const finalCap = capOf(config, 'final_logit_softcapping');
  const scale = intField(config, 'query_pre_attn_scalar') ** -0.5;
  const bias = boolField(config, 'attention_bias', false);
  const base = ctx.head === 'base' ? '' : 'model.';
  if (attnCap !== undefined) noteAttentionSoftcap(g, attnCap);
  // Gemma2Attention: sliding_window for layer_idx % 2 == 0; Gemma 3 every layer but each pattern-th (newer configs:
  // layer_types, the same patterns).
  const slides = gemma3 ? (i: number) => pattern <= 0 || (i + 1) % pattern !== 0 : (i: number) => i % 2 === 0;
  const windowOf = layerWindows(g, config, type, windowedLayers(config, d.layers, slides), d.layers, ctx.seqLen);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  // Gemma2Model multiplies the embeddings by √hidden_size (`normalizer`).
  let h = g.mul(`${base}embed_scale`, [g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids)]);
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    const normed = gemmaNorm(g, `${p}.input_layernorm`, d.hidden, h);
    const q = g.linear(`${p}.self_attn.q_proj`, d.hidden, d.heads * d.headDim, bias, normed);
    const k = g.linear(`${p}.self_attn.k_proj`, d.hidden, d.kvHeads * d.headDim, bias, normed);
    const v = g.linear(`${p}.self_attn.v_proj`, d.hidden, d.kvHeads * d.headDim, bias, normed);
    const attended = g.attention(`${p}.self_attn`, q, k, v, {
      heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim, causal: true, rotary: true, qkNorm: gemma3, dropout: rateField(config, 'attention_dropout'), softcap: attnCap, scale, window: windowOf(i),
    });
    const o = g.linear(`${p}.self_attn.o_proj`, d.heads * d.headDim, d.hidden, bias, attended);
    const r1 = g.sum(`${p}.residual_attn`, [h, gemmaNorm(g, `${p}.post_attention_layernorm`, d.hidden, o)]);
    const mlp = gatedMlp(ctx, `${p}.mlp`, gemmaNorm(g, `${p}.pre_feedforward_layernorm`, d.hidden, r1), d, act, false);
    h = g.sum(`${p}.residual_mlp`, [r1, gemmaNorm(g, `${p}.post_feedforward_layernorm`, d.hidden, mlp)]);
  }
  h = gemmaNorm(g, `${base}norm`, d.hidden, h);
  const capLogits = finalCap === undefined ? undefined : (logits: string) => softcap(g, 'logits', logits);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head', capLogits)];
}
