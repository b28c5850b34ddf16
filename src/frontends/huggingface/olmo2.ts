/**
 * OLMo 2 (transformers' modeling_olmo2.py, ≥ 4.47; allenai/OLMo-2-1124-7B and -13B): the Llama layout
 *   model.embed_tokens → model.layers.N.{self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm, post_attention_layernorm,
 *   mlp.{gate,up,down}_proj, post_feedforward_layernorm} → model.norm → lm_head (untied)
 * with two changes (Olmo2DecoderLayer, Olmo2Attention):
 * - the norms sit on the sublayers' outputs, not their inputs: attention and MLP read the residual stream as it is,
 *   and post_attention_layernorm / post_feedforward_layernorm normalise what they return before it is added back.
 *   There is no input_layernorm: two RMSNorms a layer, as Llama has;
 * - q_norm and k_norm are RMSNorms over the whole projection, heads·head_dim and kv_heads·head_dim wide, applied to
 *   q_proj's and k_proj's outputs before the heads are split (Qwen 3's are per head, head_dim wide). Whole-width norms
 *   need every head's features: transformers' own tensor-parallel plan gathers q/k/v_proj's outputs for them
 *   (Olmo2Config.base_model_tp_plan, "colwise_gather_output").
 * The projections have a bias only when attention_bias (False in the released configs); the MLP never has one.
 */
import { boolField, rateField, strField } from './configs';
import { dims, gatedMlp, lmHead, type BuildContext } from './decoder';

export function buildOlmo2(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = dims(config);
  const bias = boolField(config, 'attention_bias', false);
  const act = strField(config, 'hidden_act', 'silu');
  const base = ctx.head === 'base' ? '' : 'model.';
  const qWidth = d.heads * d.headDim;
  const kvWidth = d.kvHeads * d.headDim;

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids);
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    const a = `${p}.self_attn`;
    const q = g.norm(`${a}.q_norm`, qWidth, 'rmsnorm', g.linear(`${a}.q_proj`, d.hidden, qWidth, bias, h));
    const k = g.norm(`${a}.k_norm`, kvWidth, 'rmsnorm', g.linear(`${a}.k_proj`, d.hidden, kvWidth, bias, h));
    const v = g.linear(`${a}.v_proj`, d.hidden, kvWidth, bias, h);
    const attended = g.attention(a, q, k, v, { heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim, causal: true, rotary: true, dropout: rateField(config, 'attention_dropout') });
    const o = g.linear(`${a}.o_proj`, qWidth, d.hidden, bias, attended);
    const r1 = g.sum(`${p}.residual_attn`, [h, g.norm(`${p}.post_attention_layernorm`, d.hidden, 'rmsnorm', o)]);
    const mlp = gatedMlp(ctx, `${p}.mlp`, r1, d, act, false);
    h = g.sum(`${p}.residual_mlp`, [r1, g.norm(`${p}.post_feedforward_layernorm`, d.hidden, 'rmsnorm', mlp)]);
  }
  h = g.norm(`${base}norm`, d.hidden, 'rmsnorm', h);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
}
