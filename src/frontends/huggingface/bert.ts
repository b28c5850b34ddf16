/**
 * BERT (modeling_bert.py) and RoBERTa (modeling_roberta.py; XLM-RoBERTa and CamemBERT alike): bidirectional
 * encoders with word, position and token-type embeddings, post-LayerNorm
 * blocks and separate query/key/value projections with biases.
 * Position and token-type ids have input_ids' shape, so those embeddings take
 * input_ids as their shape source. Heads:
 * - base (BertModel / RobertaModel): with the pooler (dense + tanh on the first token);
 * - masked-lm: transform dense → act → LayerNorm → decoder tied to the word embeddings (its bias is its own);
 * - pre-training (BertForPreTraining, BERT only): the pooler, the masked-lm head on every token and
 *   cls.seq_relationship, the next-sentence Linear(hidden, 2) on the pooled first token;
 * - sequence-classification: BERT pooler → classifier; RoBERTa classifier.dense → tanh → out_proj on the first token;
 * - token-classification: dropout (classifier_dropout, else hidden_dropout_prob) → classifier on every token, no pooler;
 * - question-answering: qa_outputs Linear(hidden, 2) on every token, split into start and end logits, no pooler.
 */
import { boolField, intField, POOLER_OFF, rateField, strField } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';

function firstToken(g: HfGraph, name: string, h: string): string {
  return g.add(name, 'select first token', 'split', { axis: 1, sizes: [1], index: 0 }, [h]);
}

/** qa_outputs' two columns as the start and end logits a question-answering model returns (`logits.split(1, dim=-1)`). */
export function spanLogits(g: HfGraph, qa: string): string[] {
  const start = g.field('start_logits', g.add('start_logits', 'split', 'split', { axis: -1, sizes: [1, 1], index: 0 }, [qa]));
  const end = g.field('end_logits', g.add('end_logits', 'split', 'split', { axis: -1, sizes: [1, 1], index: 1 }, [qa]));
  return [start, end];
}

/** XLM-RoBERTa and CamemBERT are RoBERTa's modules under their own names (modeling_xlm_roberta.py is copied from it). */
export const isRobertaLayout = (modelType: unknown): boolean => modelType === 'roberta' || modelType === 'xlm-roberta' || modelType === 'camembert';

export function buildBertFamily(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const roberta = isRobertaLayout(config.model_type);
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  const layers = intField(config, 'num_hidden_layers');
  const inner = intField(config, 'intermediate_size');
  const vocab = intField(config, 'vocab_size');
  const act = strField(config, 'hidden_act', 'gelu');
  const hiddenDrop = rateField(config, 'hidden_dropout_prob');
  const attnDrop = rateField(config, 'attention_probs_dropout_prob');
  if (hidden % heads !== 0) throw new Error(`hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  const base = ctx.head === 'base' ? '' : roberta ? 'roberta.' : 'bert.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const words = g.embedding(`${base}embeddings.word_embeddings`, vocab, hidden, ids);
  const pos = g.add(`${base}embeddings.position_embeddings`, 'Embedding (positions of input_ids)', 'embedding', { numEmbeddings: intField(config, 'max_position_embeddings'), embeddingDim: hidden }, [ids]);
  const types = g.add(`${base}embeddings.token_type_embeddings`, 'Embedding (token types of input_ids)', 'embedding', { numEmbeddings: intField(config, 'type_vocab_size'), embeddingDim: hidden }, [ids]);
  let h = g.dropout(`${base}embeddings.dropout`, hiddenDrop, g.norm(`${base}embeddings.LayerNorm`, hidden, 'layernorm', g.sum(`${base}embeddings.sum`, [words, pos, types])));
  for (let i = 0; i < layers; i++) {
    const p = `${base}encoder.layer.${i}`;
    const q = g.linear(`${p}.attention.self.query`, hidden, hidden, true, h);
    const k = g.linear(`${p}.attention.self.key`, hidden, hidden, true, h);
    const v = g.linear(`${p}.attention.self.value`, hidden, hidden, true, h);
    const a = g.attention(`${p}.attention.self`, q, k, v, { heads, kvHeads: heads, headDim: hidden / heads, causal: false, dropout: attnDrop });
    const dense = g.dropout(`${p}.attention.output.dropout`, hiddenDrop, g.linear(`${p}.attention.output.dense`, hidden, hidden, true, a));
    const n1 = g.norm(`${p}.attention.output.LayerNorm`, hidden, 'layernorm', g.sum(`${p}.attention.output.residual`, [dense, h]));
    const up = g.linear(`${p}.intermediate.dense`, hidden, inner, true, n1);
    const gelu = g.act(`${p}.intermediate.intermediate_act_fn`, act, up);
    const down = g.dropout(`${p}.output.dropout`, hiddenDrop, g.linear(`${p}.output.dense`, inner, hidden, true, gelu));
    h = g.norm(`${p}.output.LayerNorm`, hidden, 'layernorm', g.sum(`${p}.output.residual`, [down, n1]));
  }
  if (ctx.head === 'base') g.field('last_hidden_state', h);
  const pooler = (): string => {
    const first = firstToken(g, `${base}pooler.first_token`, h);
    const pooled = g.act(`${base}pooler.activation`, 'tanh', g.linear(`${base}pooler.dense`, hidden, hidden, true, first), 'Tanh');
    return ctx.head === 'base' ? g.field('pooler_output', pooled) : pooled;
  };
  const maskedLmHead = (): string => {
    const tied = boolField(config, 'tie_word_embeddings', true);
    const pre = roberta ? 'lm_head' : 'cls.predictions.transform';
    const dense = g.linear(`${pre}.dense`, hidden, hidden, true, h);
    const gelu = g.act(roberta ? 'lm_head.gelu' : `${pre}.transform_act_fn`, roberta ? 'gelu' : act, dense);
    const normed = g.norm(roberta ? 'lm_head.layer_norm' : `${pre}.LayerNorm`, hidden, 'layernorm', gelu);
    return g.linear(roberta ? 'lm_head.decoder' : 'cls.predictions.decoder', hidden, vocab, true, normed, {}, tied ? `${base}embeddings.word_embeddings` : undefined);
  };
  switch (ctx.head) {
    case 'base':
      // add_pooling_layer=False: the base model returns its last hidden state only.
      return config[POOLER_OFF] === true ? [h] : [pooler()];
    case 'masked-lm':
      return [g.field('logits', maskedLmHead())];
    case 'pre-training': {
      if (roberta) throw new Error('RoBERTa has no next-sentence head (transformers has no RobertaForPreTraining)');
      // Pooler first: transformers' BertForPreTraining creates bert (with its pooler) before cls.
      const pooled = pooler();
      return [g.field('prediction_logits', maskedLmHead()), g.field('seq_relationship_logits', g.linear('cls.seq_relationship', hidden, 2, true, pooled))];
    }
    case 'sequence-classification': {
      const labels = intField(config, 'num_labels', 2);
      // classifier_dropout, or hidden_dropout_prob when it is None (BertForSequenceClassification, RobertaClassificationHead).
      const headDrop = rateField(config, 'classifier_dropout', hiddenDrop);
      if (!roberta) return [g.field('logits', g.linear('classifier', hidden, labels, true, g.dropout('dropout', headDrop, pooler())))];
      const first = g.dropout('classifier.dropout', headDrop, firstToken(g, 'classifier.first_token', h));
      const dense = g.dropout('classifier.dropout', headDrop, g.act('classifier.activation', 'tanh', g.linear('classifier.dense', hidden, hidden, true, first), 'Tanh'));
      return [g.field('logits', g.linear('classifier.out_proj', hidden, labels, true, dense))];
    }
    case 'token-classification': {
      // A label per token on the last hidden state, the base model built without its pooler.
      const headDrop = rateField(config, 'classifier_dropout', hiddenDrop);
      return [g.field('logits', g.linear('classifier', hidden, intField(config, 'num_labels', 2), true, g.dropout('dropout', headDrop, h)))];
    }
    case 'question-answering':
      return spanLogits(g, g.linear('qa_outputs', hidden, 2, true, h));
    default:
      throw new Error(`${roberta ? 'RoBERTa' : 'BERT'} has no ${ctx.head} head in WAP's catalogue`);
  }
}
