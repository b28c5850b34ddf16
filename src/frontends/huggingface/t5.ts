/**
 * T5 (modeling_t5.py): encoder–decoder with pre-norm blocks, T5LayerNorm (a
 * weight, no bias), projections without biases (inner size num_heads·d_kv) and
 * a learned relative-position bias (Embedding(num_buckets, num_heads)) in the
 * first block of each stack. The bias is looked up on the [T, T] relative
 * positions (memory position − query position) and added to the attention
 * scores. The token table is `shared`, which each stack's `embed_tokens`
 * is (T5Stack(config, self.shared)) and, when tie_word_embeddings, the LM
 * head reuses (the head input is then scaled by d_model^-0.5): one parameter,
 * named `shared.weight` as named_parameters() lists it, reached through
 * `model.encoder` as torch reaches it (`model.encoder.parameters()` yields it).
 */
import { boolField, intField, rateField, strField } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { crossEntropyLoss } from './seq2seqLayers';

interface T5Dims {
  model: number;
  kv: number;
  ff: number;
  heads: number;
  buckets: number;
  gated: boolean;
  act: string;
  /** dropout_rate: on the embeddings, every sublayer's output, the FF's hidden state, the attention probabilities and the stack's output. */
  dropout: number;
}

function relativeBias(g: HfGraph, prefix: string, ids: string, d: T5Dims): void {
  const context = g.add(`${prefix}.context_position`, 'arange[:, None]', 'reshape', { shape: [-1, 1] }, [ids]);
  const memory = g.add(`${prefix}.memory_position`, 'arange[None, :]', 'reshape', { shape: [1, -1] }, [ids]);
  const relative = g.add(`${prefix}.relative_position`, 'sub', 'add', {}, [memory, context]);
  g.add(`${prefix}.relative_attention_bias`, 'Embedding', 'embedding', { numEmbeddings: d.buckets, embeddingDim: d.heads }, [relative]);
}

function attentionBlock(g: HfGraph, prefix: string, x: string, kvSource: string, d: T5Dims, causal: boolean): string {
  const inner = d.heads * d.kv;
  const q = g.linear(`${prefix}.q`, d.model, inner, false, x);
  const k = g.linear(`${prefix}.k`, d.model, inner, false, kvSource);
  const v = g.linear(`${prefix}.v`, d.model, inner, false, kvSource);
  const a = g.attention(prefix, q, k, v, { heads: d.heads, kvHeads: d.heads, headDim: d.kv, causal, dropout: d.dropout });
  return g.linear(`${prefix}.o`, inner, d.model, false, a);
}

function feedForward(g: HfGraph, prefix: string, x: string, d: T5Dims): string {
  const drop = (h: string) => g.dropout(`${prefix}.dropout`, d.dropout, h);
  if (!d.gated) return g.linear(`${prefix}.wo`, d.ff, d.model, false, drop(g.act(`${prefix}.act`, d.act, g.linear(`${prefix}.wi`, d.model, d.ff, false, x))));
  const gate = g.act(`${prefix}.act`, d.act, g.linear(`${prefix}.wi_0`, d.model, d.ff, false, x));
  const up = g.linear(`${prefix}.wi_1`, d.model, d.ff, false, x);
  return g.linear(`${prefix}.wo`, d.ff, d.model, false, drop(g.mul(`${prefix}.mul`, [gate, up])));
}

function stack(g: HfGraph, name: 'encoder' | 'decoder', ids: string, embedded: string, layers: number, d: T5Dims, encoderOut?: string): string {
  const drop = (sub: string, x: string) => g.dropout(`${sub}.dropout`, d.dropout, x);
  let h = drop(name, embedded);
  for (let i = 0; i < layers; i++) {
    const p = `${name}.block.${i}.layer`;
    const n0 = g.norm(`${p}.0.layer_norm`, d.model, 'rmsnorm', h, 'T5LayerNorm');
    if (i === 0) relativeBias(g, `${p}.0.SelfAttention`, ids, d);
    h = g.sum(`${p}.0.residual`, [h, drop(`${p}.0`, attentionBlock(g, `${p}.0.SelfAttention`, n0, n0, d, name === 'decoder'))]);
    let ffIndex = 1;
    if (encoderOut) {
      const n1 = g.norm(`${p}.1.layer_norm`, d.model, 'rmsnorm', h, 'T5LayerNorm');
      h = g.sum(`${p}.1.residual`, [h, drop(`${p}.1`, attentionBlock(g, `${p}.1.EncDecAttention`, n1, encoderOut, d, false))]);
      ffIndex = 2;
    }
    const nf = g.norm(`${p}.${ffIndex}.layer_norm`, d.model, 'rmsnorm', h, 'T5LayerNorm');
    h = g.sum(`${p}.${ffIndex}.residual`, [h, drop(`${p}.${ffIndex}`, feedForward(g, `${p}.${ffIndex}.DenseReluDense`, nf, d))]);
  }
  return drop(name, g.norm(`${name}.final_layer_norm`, d.model, 'rmsnorm', h, 'T5LayerNorm'));
}

export function buildT5(ctx: BuildContext, encoderOnly: boolean): string[] {
  const { graph: g, config } = ctx;
  const proj = strField(config, 'feed_forward_proj', 'relu').split('-');
  const gated = proj.length > 1 && proj[0] === 'gated';
  const actName = proj[proj.length - 1];
  const d: T5Dims = {
    model: intField(config, 'd_model'),
    kv: intField(config, 'd_kv'),
    ff: intField(config, 'd_ff'),
    heads: intField(config, 'num_heads'),
    buckets: intField(config, 'relative_attention_num_buckets'),
    gated,
    // T5Config turns "gated-gelu" into the tanh approximation (gelu_new).
    act: actName === 'gelu' && gated ? 'gelu_new' : actName,
    dropout: rateField(config, 'dropout_rate'),
  };
  const layers = intField(config, 'num_layers');
  const decoderLayers = intField(config, 'num_decoder_layers', layers);
  const vocab = intField(config, 'vocab_size');

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const encEmbedded = g.add('encoder.embed_tokens', 'Embedding', 'embedding', { numEmbeddings: vocab, embeddingDim: d.model }, [ids], 'shared');
  const encoded = stack(g, 'encoder', ids, encEmbedded, layers, d);
  if (encoderOnly) return [g.field('last_hidden_state', encoded)];
  const decIds = g.input('decoder_input_ids', [ctx.seqLen], 'int');
  const decEmbedded = g.add('decoder.embed_tokens', 'Embedding', 'embedding', { numEmbeddings: vocab, embeddingDim: d.model }, [decIds], 'shared');
  const decoded = stack(g, 'decoder', decIds, decEmbedded, decoderLayers, d, encoded);
  if (ctx.head === 'base') {
    g.field('last_hidden_state', decoded);
    g.field('encoder_last_hidden_state', encoded);
    return [decoded];
  }
  if (ctx.head !== 'seq2seq-lm') throw new Error(`T5 has no ${ctx.head} head in WAP's catalogue`);
  const tied = boolField(config, 'tie_word_embeddings', true);
  const scaled = tied ? g.mul('lm_head.rescale', [decoded]) : decoded;
  const logits = g.field('logits', g.linear('lm_head', d.model, vocab, false, scaled, {}, tied ? 'shared' : undefined));
  g.field('encoder_last_hidden_state', encoded);
  // WAP plans training: the step passes labels, and T5ForConditionalGeneration.forward takes CrossEntropyLoss of
  // its logits (ignore_index -100), as BART's does (seq2seqLayers.ts).
  return [crossEntropyLoss(g, logits)];
}
