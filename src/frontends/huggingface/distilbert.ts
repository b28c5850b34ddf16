/**
 * DistilBERT (modeling_distilbert.py, Sanh et al. 2019): BERT's encoder at half the depth, without token types or
 * pooler. Its names: embeddings (word and position tables, LayerNorm, dropout), transformer.layer.N with attention
 * (q_lin, k_lin, v_lin, out_lin; dropout on the attention weights only), sa_layer_norm after the residual, ffn (lin1 →
 * activation → lin2 → dropout) and output_layer_norm. Heads:
 * - base (DistilBertModel): the last hidden state;
 * - masked-lm: vocab_transform → activation → vocab_layer_norm → vocab_projector, tied to the word embeddings;
 * - sequence-classification: the first token → pre_classifier → ReLU → dropout (seq_classif_dropout) → classifier;
 * - token-classification: dropout → classifier on every token; question-answering: dropout (qa_dropout) → qa_outputs.
 */
import { boolField, intField, rateField, strField } from './configs';
import type { BuildContext } from './decoder';
import { spanLogits } from './bert';

export function buildDistilBert(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const dim = intField(config, 'dim');
  const heads = intField(config, 'n_heads');
  const layers = intField(config, 'n_layers');
  const inner = intField(config, 'hidden_dim');
  const vocab = intField(config, 'vocab_size');
  const act = strField(config, 'activation', 'gelu');
  const drop = rateField(config, 'dropout');
  const attnDrop = rateField(config, 'attention_dropout');
  if (dim % heads !== 0) throw new Error(`dim ${dim} is not divisible by n_heads ${heads}`);
  const base = ctx.head === 'base' ? '' : 'distilbert.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const words = g.embedding(`${base}embeddings.word_embeddings`, vocab, dim, ids);
  // Learned positions; sinusoidal_pos_embds fills the same table with fixed values and turns its requires_grad off
  // (create_sinusoidal_embeddings), so it trains nothing.
  const pos = g.add(`${base}embeddings.position_embeddings`, 'Embedding (positions of input_ids)', 'embedding', { numEmbeddings: intField(config, 'max_position_embeddings'), embeddingDim: dim }, [ids]);
  if (boolField(config, 'sinusoidal_pos_embds', false)) g.layers.find((l) => l.id === pos)!.frozen = true;
  let h = g.dropout(`${base}embeddings.dropout`, drop, g.norm(`${base}embeddings.LayerNorm`, dim, 'layernorm', g.sum(`${base}embeddings.sum`, [words, pos])));
  for (let i = 0; i < layers; i++) {
    const p = `${base}transformer.layer.${i}`;
    const q = g.linear(`${p}.attention.q_lin`, dim, dim, true, h);
    const k = g.linear(`${p}.attention.k_lin`, dim, dim, true, h);
    const v = g.linear(`${p}.attention.v_lin`, dim, dim, true, h);
    const a = g.attention(`${p}.attention`, q, k, v, { heads, kvHeads: heads, headDim: dim / heads, causal: false, dropout: attnDrop });
    const sa = g.norm(`${p}.sa_layer_norm`, dim, 'layernorm', g.sum(`${p}.attention.residual`, [g.linear(`${p}.attention.out_lin`, dim, dim, true, a), h]));
    const up = g.act(`${p}.ffn.activation`, act, g.linear(`${p}.ffn.lin1`, dim, inner, true, sa));
    const down = g.dropout(`${p}.ffn.dropout`, drop, g.linear(`${p}.ffn.lin2`, inner, dim, true, up));
    h = g.norm(`${p}.output_layer_norm`, dim, 'layernorm', g.sum(`${p}.ffn.residual`, [down, sa]));
  }
  switch (ctx.head) {
    case 'base':
      return [g.field('last_hidden_state', h)];
    case 'masked-lm': {
      const tied = boolField(config, 'tie_word_embeddings', true);
      const normed = g.norm('vocab_layer_norm', dim, 'layernorm', g.act('activation', act, g.linear('vocab_transform', dim, dim, true, h)));
      return [g.field('logits', g.linear('vocab_projector', dim, vocab, true, normed, {}, tied ? `${base}embeddings.word_embeddings` : undefined))];
    }
    case 'sequence-classification': {
      const first = g.add('first_token', 'select first token', 'split', { axis: 1, sizes: [1], index: 0 }, [h]);
      const pre = g.dropout('dropout', rateField(config, 'seq_classif_dropout'), g.act('pre_classifier.relu', 'relu', g.linear('pre_classifier', dim, dim, true, first), 'ReLU'));
      return [g.field('logits', g.linear('classifier', dim, intField(config, 'num_labels', 2), true, pre))];
    }
    case 'token-classification':
      return [g.field('logits', g.linear('classifier', dim, intField(config, 'num_labels', 2), true, g.dropout('dropout', drop, h)))];
    case 'question-answering':
      return spanLogits(g, g.linear('qa_outputs', dim, 2, true, g.dropout('dropout', rateField(config, 'qa_dropout', 0.1), h)));
    default:
      throw new Error(`DistilBERT has no ${ctx.head} head in WAP's catalogue`);
  }
}
