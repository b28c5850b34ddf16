/**
 * Phi-3 (modeling_phi3.py): the Llama layout with two fused projections,
 *   model.embed_tokens → model.layers.N.{input_layernorm, self_attn.{qkv_proj, o_proj},
 *   post_attention_layernorm, mlp.{gate_up_proj, down_proj}} → model.norm → lm_head
 * qkv_proj writes the heads·d query features, then kv·d key and kv·d value features, which Phi3Attention slices
 * apart; gate_up_proj writes 2·intermediate features that Phi3MLP chunks into gate and up, and
 * up · act(gate) goes through down_proj. No projection has a bias; the norms are RMSNorms (a weight each).
 * Dropouts: resid_pdrop on the attention and the MLP outputs before each residual add (Phi3DecoderLayer's
 * resid_attn_dropout and resid_mlp_dropout), attention_dropout on the probabilities. Phi3Model runs its layers on
 * the embeddings as they are, so embd_pdrop, a config field no module reads, adds no dropout.
 */
import { intField, rateField, strField } from './configs';
import { dims, lmHead, type BuildContext, type DecoderDims } from './decoder';
import { layerWindows, windowedLayers } from './slidingWindow';

/** One section of a fused projection's output, as the modeling file slices or chunks it (a view: no copy). */
function section(ctx: BuildContext, name: string, fused: string, sizes: number[], index: number): string {
  return ctx.graph.add(name, 'slice', 'split', { axis: -1, sizes, index }, [fused]);
}

function fusedMlp(ctx: BuildContext, prefix: string, x: string, d: DecoderDims): string {
  const g = ctx.graph;
  const gateUp = g.linear(`${prefix}.gate_up_proj`, d.hidden, 2 * d.intermediate, false, x);
  const halves = [d.intermediate, d.intermediate];
  const gate = section(ctx, `${prefix}.gate`, gateUp, halves, 0);
  const up = section(ctx, `${prefix}.up_states`, gateUp, halves, 1);
  const activated = g.act(`${prefix}.activation_fn`, strField(ctx.config, 'hidden_act', 'silu'), gate);
  return g.linear(`${prefix}.down_proj`, d.intermediate, d.hidden, false, g.mul(`${prefix}.mul`, [up, activated]));
}

export function buildPhi3(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = dims(config);
  const resid = rateField(config, 'resid_pdrop');
  const base = ctx.head === 'base' ? '' : 'model.';
  // Phi3Attention hands config.sliding_window to every layer's attention.
  const windowOf = layerWindows(g, config, 'phi3', windowedLayers(config, d.layers, () => true), d.layers, ctx.seqLen);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.embedding(`${base}embed_tokens`, d.vocab, d.hidden, ids);
  const qkvSizes = [d.heads * d.headDim, d.kvHeads * d.headDim, d.kvHeads * d.headDim];
  for (let i = 0; i < intField(config, 'num_hidden_layers'); i++) {
    const p = `${base}layers.${i}`;
    const normed = g.norm(`${p}.input_layernorm`, d.hidden, 'rmsnorm', h);
    const qkv = g.linear(`${p}.self_attn.qkv_proj`, d.hidden, qkvSizes[0] + qkvSizes[1] + qkvSizes[2], false, normed);
    const [q, k, v] = ['query_states', 'key_states', 'value_states'].map((role, j) => section(ctx, `${p}.self_attn.${role}`, qkv, qkvSizes, j));
    const ctxOut = g.attention(`${p}.self_attn`, q, k, v, { heads: d.heads, kvHeads: d.kvHeads, headDim: d.headDim, causal: true, rotary: true, dropout: rateField(config, 'attention_dropout'), window: windowOf(i) });
    const o = g.dropout(`${p}.resid_attn_dropout`, resid, g.linear(`${p}.self_attn.o_proj`, d.heads * d.headDim, d.hidden, false, ctxOut));
    const r1 = g.sum(`${p}.residual_attn`, [h, o]);
    const normed2 = g.norm(`${p}.post_attention_layernorm`, d.hidden, 'rmsnorm', r1);
    const mlp = g.dropout(`${p}.resid_mlp_dropout`, resid, fusedMlp(ctx, `${p}.mlp`, normed2, d));
    h = g.sum(`${p}.residual_mlp`, [r1, mlp]);
  }
  h = g.norm(`${base}norm`, d.hidden, 'rmsnorm', h);
  return [lmHead(ctx, h, d.hidden, d.vocab, `${base}embed_tokens`, 'lm_head')];
}
