/**
 * Phi-1, Phi-1.5 and Phi-2 (transformers' modeling_phi.py, model_type 'phi'; Phi-3 is phi3.ts):
 *   model.embed_tokens → model.embed_dropout → model.layers.N.{input_layernorm,
 *   self_attn.{q_proj, k_proj, v_proj, dense}, mlp.{fc1, fc2}, resid_dropout} → model.final_layernorm → lm_head
 * - one LayerNorm (weight and bias) a layer, and attention and MLP in parallel on its output (PhiDecoderLayer):
 *   h = resid_dropout(attn(ln(h))) + resid_dropout(mlp(ln(h))) + h, one resid_dropout module run twice;
 * - every projection has a bias, the attention output's included (`dense`), and so does the LM head;
 * - partial rotary positions: only the first int(head_dim · partial_rotary_factor) features of each query and key
 *   head rotate (Phi-2: 32 of 80), the rest pass through, and torch.cat puts them back together (a copy);
 * - qk_layernorm (False in the released configs) adds a LayerNorm of head_dim per query and key head, after the
 *   heads are split (as the attention-interface code of transformers ≥ 4.48 applies it);
 * - the MLP is fc1 → hidden_act (gelu_new) → fc2, no gate.
 * Dropouts: embd_pdrop after the embeddings, resid_pdrop on both branches (Phi-2 trains with 0.1), attention_dropout
 * on the probabilities.
 */
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import { dims, lmHead, type BuildContext, type DecoderDims } from './decoder';
import type { HfGraph } from './graph';
import { mergeHeads, rotary, splitHeads, type HeadLayout } from './heads';

/** PhiAttention's rotary_ndims: int(head_dim · partial_rotary_factor), the leading features of a head that rotate. */
function rotaryWidth(config: HfConfig, headDim: number): number {
  const factor = config.partial_rotary_factor;
  if (typeof factor !== 'number' || !(factor >= 0 && factor <= 1)) throw new Error(`config field 'partial_rotary_factor' must be between 0 and 1, got ${JSON.stringify(factor)}`);
  return Math.floor(headDim * factor);
}

/**
 * The rotated heads: x[..., :r] through the rotary products, x[..., r:] as it is, concatenated back
 * (`query_rot` / `query_pass` → `query_states`). A head that rotates whole skips the slices and the copy.
 */
function partialRotary(g: HfGraph, prefix: string, role: 'query' | 'key', x: string, headDim: number, width: number): string {
  if (width === 0) return x;
  if (width === headDim) return rotary(g, `${prefix}.${role}`, x);
  const sizes = [width, headDim - width];
  const rot = g.add(`${prefix}.${role}_rot`, `${role}_states[..., :${width}]`, 'split', { axis: -1, sizes, index: 0 }, [x]);
  const pass = g.add(`${prefix}.${role}_pass`, `${role}_states[..., ${width}:]`, 'split', { axis: -1, sizes, index: 1 }, [x]);
  return g.add(`${prefix}.${role}_states`, 'torch.cat', 'concat', { axis: -1 }, [rotary(g, `${prefix}.${role}`, rot), pass]);
}

/** PhiAttention on the normed hidden states: biased projections, per-head norms if asked, partial rotary, dense. */
function phiAttention(ctx: BuildContext, prefix: string, x: string, d: DecoderDims): string {
  const { graph: g, config } = ctx;
  const layout: HeadLayout = { heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim };
  const width = rotaryWidth(config, d.headDim);
  const qkNorm = boolField(config, 'qk_layernorm', false);
  const heads = (role: 'q' | 'k' | 'v', perKv: number): string => {
    const split = splitHeads(g, prefix, role, g.linear(`${prefix}.${role}_proj`, d.hidden, (role === 'q' ? d.heads : d.kvHeads) * d.headDim, true, x), layout, perKv);
    return qkNorm && role !== 'v' ? g.norm(`${prefix}.${role}_layernorm`, d.headDim, 'layernorm', split) : split;
  };
  const q = partialRotary(g, prefix, 'query', heads('q', d.heads / d.kvHeads), d.headDim, width);
  const k = partialRotary(g, prefix, 'key', heads('k', 1), d.headDim, width);
  const v = heads('v', 1);
  const attended = g.add(`${prefix}.sdpa`, 'scaled_dot_product_attention', 'sdpa', { causal: true, heads: d.heads, kvHeads: d.kvHeads, dropout: rateField(config, 'attention_dropout') }, [q, k, v]);
  return g.linear(`${prefix}.dense`, d.heads * d.headDim, d.hidden, true, mergeHeads(g, prefix, attended, layout));
}

export function buildPhi(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = dims(config);
  if (d.heads * d.headDim !== d.hidden) throw new Error(`hidden_size ${d.hidden} is not num_attention_heads ${d.heads} × head_dim ${d.headDim}`);
  const act = strField(config, 'hidden_act', 'gelu_new');
  const resid = rateField(config, 'resid_pdrop');
  const base = ctx.head === 'base' ? '' : 'model.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.dropout(`${base}embed_dropout`, rateField(config, 'embd_pdrop'), g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids));
  for (let i = 0; i < intField(config, 'num_hidden_layers'); i++) {
    const p = `${base}layers.${i}`;
    const normed = g.norm(`${p}.input_layernorm`, d.hidden, 'layernorm', h);
    const attended = g.dropout(`${p}.resid_dropout`, resid, phiAttention(ctx, `${p}.self_attn`, normed, d));
    const fc1 = g.linear(`${p}.mlp.fc1`, d.hidden, d.intermediate, true, normed);
    const fc2 = g.linear(`${p}.mlp.fc2`, d.intermediate, d.hidden, true, g.act(`${p}.mlp.activation_fn`, act, fc1));
    h = g.sum(`${p}.residual`, [attended, g.dropout(`${p}.resid_dropout`, resid, fc2), h]);
  }
  h = g.norm(`${base}final_layernorm`, d.hidden, 'layernorm', h);
  if (ctx.head !== 'causal-lm') return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
  // PhiForCausalLM's lm_head is nn.Linear(hidden, vocab, bias=True); tying shares its weight, never the bias.
  const tied = boolField(config, 'tie_word_embeddings', false);
  return [g.causalLmLoss(g.field('logits', g.linear('lm_head', d.hidden, d.vocab, true, h, {}, tied ? `${base}embed_tokens` : undefined)))];
}
