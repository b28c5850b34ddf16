/**
 * BART (modeling_bart.py) and mBART (modeling_mbart.py): encoder–decoders over one token table, `model.shared`,
 * which both stacks' embed_tokens are (transformers ties them, and the LM head, to it: one parameter, named
 * `model.shared.weight` as named_parameters() lists it). Each stack adds learned positions (BartLearnedPositionalEmbedding:
 * max_position_embeddings + 2 rows, the ids offset by 2, a layout kept from fairseq), multiplies the token embeddings
 * by √d_model when scale_embedding (BartScaledWordEmbedding; mBART's checkpoints set it), normalizes the sum
 * (layernorm_embedding) and runs its layers (seq2seqLayers.ts): post-LN in BART; pre-LN in mBART, whose stacks end in
 * a LayerNorm (`encoder.layer_norm`, `decoder.layer_norm`). Heads:
 * - base (BartModel): the decoder's last hidden state; without decoder_input_ids BartModel feeds the decoder
 *   shift_tokens_right(input_ids), so the decoder runs at input_ids' length;
 * - seq2seq-lm (BartForConditionalGeneration): lm_head, tied to `model.shared` unless tie_word_embeddings is false,
 *   plus final_logits_bias, a registered buffer (zeros, never trained: not a parameter, which BART-large-cnn's
 *   published 406,290,432 leave out), then the cross-entropy loss of a training step. The decoder reads
 *   decoder_input_ids, shift_tokens_right(labels), at the configured length as T5's does (t5.ts);
 * - sequence-classification (BartForSequenceClassification): the decoder, fed shift_tokens_right(input_ids), and
 *   classification_head (dropout → dense → tanh → dropout → out_proj) on the hidden state of the last eos token.
 */
import { boolField, intField, rateField, type HfConfig } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { crossEntropyLoss, layerDropNote, seq2seqDims, stackDims, stackLayers, type Seq2SeqDims } from './seq2seqLayers';

/** BartLearnedPositionalEmbedding's `self.offset = 2`: the table has two rows before position 0 (fairseq's padding layout). */
const POSITION_OFFSET = 2;

/** The embeddings of one stack: tokens (scaled when the config says), learned positions, layernorm_embedding, dropout. */
function embeddings(g: HfGraph, prefix: string, ids: string, shared: string, d: Seq2SeqDims, config: HfConfig): string {
  const vocab = intField(config, 'vocab_size');
  const tokens = g.add(`${prefix}.embed_tokens`, 'BartScaledWordEmbedding', 'embedding', { numEmbeddings: vocab, embeddingDim: d.model }, [ids], shared);
  const scaled = boolField(config, 'scale_embedding', false) ? g.mul(`${prefix}.embed_scale`, [tokens]) : tokens;
  const rows = intField(config, 'max_position_embeddings') + POSITION_OFFSET;
  // Looked up at the positions of the ids (plus the offset), so they take the ids' shape.
  const positions = g.add(`${prefix}.embed_positions`, 'BartLearnedPositionalEmbedding', 'embedding', { numEmbeddings: rows, embeddingDim: d.model }, [ids]);
  const normed = g.norm(`${prefix}.layernorm_embedding`, d.model, 'layernorm', g.sum(`${prefix}.embeddings`, [scaled, positions]));
  return g.dropout(`${prefix}.embeddings_dropout`, d.dropout, normed);
}

function stack(g: HfGraph, prefix: string, ids: string, shared: string, d: Seq2SeqDims, config: HfConfig, side: 'encoder' | 'decoder', encoderOut?: string): string {
  const h = stackLayers(g, prefix, embeddings(g, prefix, ids, shared, d, config), d, stackDims(config, side, d.model), encoderOut);
  return d.preNorm ? g.norm(`${prefix}.layer_norm`, d.model, 'layernorm', h) : h;
}

export function buildBart(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const modelType = String(config.model_type);
  const d = seq2seqDims(config, { preNorm: modelType === 'mbart', keyBias: true });
  const vocab = intField(config, 'vocab_size');
  const base = ctx.head === 'base' ? '' : 'model.';
  const shared = `${base}shared`;
  layerDropNote(g, config, modelType);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const encoded = stack(g, `${base}encoder`, ids, shared, d, config, 'encoder');
  // shift_tokens_right(input_ids) has input_ids' shape: the decoder embeds at the same length (BartModel.forward).
  const decoderIds = ctx.head === 'seq2seq-lm' ? g.input('decoder_input_ids', [ctx.seqLen], 'int') : ids;
  const decoded = stack(g, `${base}decoder`, decoderIds, shared, d, config, 'decoder', encoded);
  // transformers' Seq2Seq…Output classes list the encoder's last state after the decoder's, the logits and the loss.
  const withEncoderState = (outputs: string[]): string[] => {
    g.field('encoder_last_hidden_state', encoded);
    return outputs;
  };
  switch (ctx.head) {
    case 'base':
      return withEncoderState([g.field('last_hidden_state', decoded)]);
    case 'seq2seq-lm': {
      const tied = boolField(config, 'tie_word_embeddings', true);
      const projected = g.linear('lm_head', d.model, vocab, false, decoded, {}, tied ? shared : undefined);
      const logits = g.field('logits', g.add('final_logits_bias', 'add (final_logits_bias buffer)', 'add', {}, [projected]));
      return withEncoderState([crossEntropyLoss(g, logits)]);
    }
    case 'sequence-classification': {
      const eos = g.add('eos_token', 'select last eos token', 'split', { axis: 1, sizes: [1], index: 0 }, [decoded]);
      const headDrop = rateField(config, 'classifier_dropout');
      const dense = g.linear('classification_head.dense', d.model, d.model, true, g.dropout('classification_head.dropout', headDrop, eos));
      const pooled = g.dropout('classification_head.dropout', headDrop, g.act('classification_head.activation', 'tanh', dense, 'Tanh'));
      return withEncoderState([g.field('logits', g.linear('classification_head.out_proj', d.model, intField(config, 'num_labels', 2), true, pooled))]);
    }
    default:
      throw new Error(`${modelType} has no ${ctx.head} head in WAP's catalogue`);
  }
}
