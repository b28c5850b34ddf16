/**
 * GPT-2 (modeling_gpt2.py) and GPT-NeoX (modeling_gpt_neox.py): decoder-only,
 * LayerNorm with bias, one fused QKV projection split into query, key and value.
 * GPT-2's Conv1D modules are linear layers with a transposed weight (same
 * parameters and FLOPs); its position embeddings are looked up at the positions
 * of input_ids (so they take input_ids' shape). GPT-NeoX's rotary embeddings have
 * no parameters, and by default attention and MLP run in parallel off one residual.
 */
import { boolField, intField, rateField, strField } from './configs';
import { lmHead, type BuildContext } from './decoder';
import type { HfGraph } from './graph';

function qkvSplit(g: HfGraph, prefix: string, fused: string): [string, string, string] {
  const part = (i: number, role: string) => g.add(`${prefix}.${role}`, 'split', 'split', { axis: -1, chunks: 3, index: i }, [fused]);
  return [part(0, 'query'), part(1, 'key'), part(2, 'value')];
}

export function buildGpt2(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const hidden = intField(config, 'n_embd');
  const heads = intField(config, 'n_head');
  const layers = intField(config, 'n_layer');
  const inner = intField(config, 'n_inner', 4 * hidden);
  const vocab = intField(config, 'vocab_size');
  const positions = intField(config, 'n_positions');
  const act = strField(config, 'activation_function', 'gelu_new');
  const resid = rateField(config, 'resid_pdrop');
  if (hidden % heads !== 0) throw new Error(`n_embd ${hidden} is not divisible by n_head ${heads}`);
  const base = ctx.head === 'base' ? '' : 'transformer.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const tokens = g.embedding(`${base}wte`, vocab, hidden, ids);
  const pos = g.add(`${base}wpe`, 'Embedding (positions of input_ids)', 'embedding', { numEmbeddings: positions, embeddingDim: hidden }, [ids]);
  let h = g.dropout(`${base}drop`, rateField(config, 'embd_pdrop'), g.sum(`${base}embeddings`, [tokens, pos]));
  for (let i = 0; i < layers; i++) {
    const p = `${base}h.${i}`;
    const n1 = g.norm(`${p}.ln_1`, hidden, 'layernorm', h);
    const fused = g.add(`${p}.attn.c_attn`, 'Conv1D', 'linear', { inFeatures: hidden, outFeatures: 3 * hidden, bias: true }, [n1]);
    const [q, k, v] = qkvSplit(g, `${p}.attn`, fused);
    const a = g.attention(`${p}.attn`, q, k, v, { heads, kvHeads: heads, headDim: hidden / heads, causal: true, dropout: rateField(config, 'attn_pdrop') });
    const proj = g.dropout(`${p}.attn.resid_dropout`, resid, g.add(`${p}.attn.c_proj`, 'Conv1D', 'linear', { inFeatures: hidden, outFeatures: hidden, bias: true }, [a]));
    const r1 = g.sum(`${p}.residual_attn`, [h, proj]);
    const n2 = g.norm(`${p}.ln_2`, hidden, 'layernorm', r1);
    const fc = g.add(`${p}.mlp.c_fc`, 'Conv1D', 'linear', { inFeatures: hidden, outFeatures: inner, bias: true }, [n2]);
    const gelu = g.act(`${p}.mlp.act`, act, fc);
    const out = g.dropout(`${p}.mlp.dropout`, resid, g.add(`${p}.mlp.c_proj`, 'Conv1D', 'linear', { inFeatures: inner, outFeatures: hidden, bias: true }, [gelu]));
    h = g.sum(`${p}.residual_mlp`, [r1, out]);
  }
  h = g.norm(`${base}ln_f`, hidden, 'layernorm', h);
  return [lmHead(ctx, h, hidden, vocab, `${base}wte`, 'lm_head')];
}

export function buildGptNeox(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  const layers = intField(config, 'num_hidden_layers');
  const inner = intField(config, 'intermediate_size');
  const vocab = intField(config, 'vocab_size');
  const bias = boolField(config, 'attention_bias', true);
  const parallel = boolField(config, 'use_parallel_residual', true);
  const act = strField(config, 'hidden_act', 'gelu');
  const hiddenDrop = rateField(config, 'hidden_dropout');
  if (hidden % heads !== 0) throw new Error(`hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  const base = ctx.head === 'base' ? '' : 'gpt_neox.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  let h = g.dropout(`${base}emb_dropout`, hiddenDrop, g.embedding(`${base}embed_in`, vocab, hidden, ids));
  for (let i = 0; i < layers; i++) {
    const p = `${base}layers.${i}`;
    const n1 = g.norm(`${p}.input_layernorm`, hidden, 'layernorm', h);
    const fused = g.linear(`${p}.attention.query_key_value`, hidden, 3 * hidden, bias, n1);
    const [q, k, v] = qkvSplit(g, `${p}.attention`, fused);
    const a = g.attention(`${p}.attention`, q, k, v, { heads, kvHeads: heads, headDim: hidden / heads, causal: true, dropout: rateField(config, 'attention_dropout') });
    const dense = g.dropout(`${p}.post_attention_dropout`, hiddenDrop, g.linear(`${p}.attention.dense`, hidden, hidden, bias, a));
    const mlpIn = parallel ? h : g.sum(`${p}.residual_attn`, [h, dense]);
    const n2 = g.norm(`${p}.post_attention_layernorm`, hidden, 'layernorm', mlpIn);
    const up = g.linear(`${p}.mlp.dense_h_to_4h`, hidden, inner, true, n2);
    const gelu = g.act(`${p}.mlp.act`, act, up);
    const down = g.dropout(`${p}.post_mlp_dropout`, hiddenDrop, g.linear(`${p}.mlp.dense_4h_to_h`, inner, hidden, true, gelu));
    h = parallel ? g.sum(`${p}.residual`, [h, dense, down]) : g.sum(`${p}.residual_mlp`, [mlpIn, down]);
  }
  h = g.norm(`${base}final_layer_norm`, hidden, 'layernorm', h);
  return [lmHead(ctx, h, hidden, vocab, `${base}embed_in`, 'embed_out')];
}
