/**
 * Whisper (modeling_whisper.py): a speech encoder–decoder. The encoder reads log-mel features, input_features
 * [num_mel_bins, frames], through two Conv1d layers with a GELU each (conv1 kernel 3, padding 1; conv2 kernel 3,
 * stride 2, padding 1: 3000 frames become 1500 positions), adds its position table, embed_positions, read whole
 * (an nn.Embedding of max_source_positions rows holding sinusoids, which WhisperEncoder freezes with
 * `self.embed_positions.requires_grad_(False)`: it counts among the model's parameters, as whisper-small's published
 * 241,734,912 include its 1500 × 768, but trains no gradient or optimizer state, so WAP marks it frozen), then pre-LN
 * layers (seq2seqLayers.ts; k_proj without a bias) and `layer_norm`. The decoder embeds decoder_input_ids with
 * embed_tokens and the learned embed_positions (max_target_positions rows), runs pre-LN layers with cross-attention
 * on the encoder's output and `layer_norm`. scale_embedding is read into embed_scale but never applied in forward.
 * Heads: base (WhisperModel) returns the decoder's last state; seq2seq-lm (WhisperForConditionalGeneration, or
 * AutoModelForSpeechSeq2Seq) adds proj_out, tied to the decoder's embed_tokens unless tie_word_embeddings is false,
 * and the cross-entropy loss of a training step on decoder_input_ids = shift_tokens_right(labels).
 */
import { boolField, intField } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { crossEntropyLoss, layerDropNote, seq2seqDims, stackDims, stackLayers } from './seq2seqLayers';

/** WhisperEncoder's conv1 keeps the frame rate and conv2 halves it (stride 2); forward checks frames = positions · 1 · 2. */
const CONV1_STRIDE = 1;
const CONV2_STRIDE = 2;

/** nn.Conv1d(in, out, kernel_size=3, stride, padding=1) as WAP's conv attrs. */
function conv1d(g: HfGraph, name: string, inChannels: number, outChannels: number, stride: number, x: string): string {
  return g.add(name, 'Conv1d', 'conv', { rank: 1, inChannels, outChannels, kernel: [3], stride: [stride], padding: [[1, 1]], dilation: [1], groups: 1, bias: true }, [x]);
}

export function buildWhisper(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = seq2seqDims(config, { preNorm: true, keyBias: false });
  const mels = intField(config, 'num_mel_bins');
  const sourcePositions = intField(config, 'max_source_positions');
  const targetPositions = intField(config, 'max_target_positions');
  const vocab = intField(config, 'vocab_size');
  const base = ctx.head === 'base' ? '' : 'model.';
  const enc = `${base}encoder`;
  const dec = `${base}decoder`;
  layerDropNote(g, config, 'whisper');

  // WhisperEncoder.forward raises unless the features have exactly max_source_positions · 1 · 2 frames (30 s of audio
  // at WhisperFeatureExtractor's 10 ms hop: its nb_max_frames 3000), so the shape is the config's, not a choice.
  const frames = sourcePositions * CONV1_STRIDE * CONV2_STRIDE;
  const features = g.input('input_features', [mels, frames], 'float');
  describeInput(g, features, `the config's num_mel_bins (${mels}) by max_source_positions · ${CONV1_STRIDE * CONV2_STRIDE} (${frames}) frames, the length WhisperEncoder requires`);
  const conv1 = g.act(`${enc}.conv1_gelu`, 'gelu', conv1d(g, `${enc}.conv1`, mels, d.model, CONV1_STRIDE, features), 'F.gelu');
  const conv2 = g.act(`${enc}.conv2_gelu`, 'gelu', conv1d(g, `${enc}.conv2`, d.model, d.model, CONV2_STRIDE, conv1), 'F.gelu');
  const steps = g.add(`${enc}.permute`, 'permute', 'permute', { dims: [0, 2, 1] }, [conv2]);
  const table = g.add(`${enc}.embed_positions.weight`, 'Embedding (every row, requires_grad False)', 'parameter', { shape: [sourcePositions, d.model] }, []);
  freeze(g, table);
  const encoderIn = g.dropout(`${enc}.embeddings_dropout`, d.dropout, g.sum(`${enc}.embeddings`, [steps, table]));
  const encoded = g.norm(`${enc}.layer_norm`, d.model, 'layernorm', stackLayers(g, enc, encoderIn, d, stackDims(config, 'encoder', d.model)));

  const ids = g.input('decoder_input_ids', [ctx.seqLen], 'int');
  const tokens = g.embedding(`${dec}.embed_tokens`, vocab, d.model, ids);
  // WhisperPositionalEmbedding returns the table's first rows, one per token: the ids' shape.
  const positions = g.add(`${dec}.embed_positions`, 'WhisperPositionalEmbedding', 'embedding', { numEmbeddings: targetPositions, embeddingDim: d.model }, [ids]);
  const decoderIn = g.dropout(`${dec}.embeddings_dropout`, d.dropout, g.sum(`${dec}.embeddings`, [tokens, positions]));
  const decoded = g.norm(`${dec}.layer_norm`, d.model, 'layernorm', stackLayers(g, dec, decoderIn, d, stackDims(config, 'decoder', d.model), encoded));

  let outputs: string[];
  if (ctx.head === 'base') outputs = [g.field('last_hidden_state', decoded)];
  else if (ctx.head === 'seq2seq-lm') {
    const tied = boolField(config, 'tie_word_embeddings', true);
    const logits = g.field('logits', g.linear('proj_out', d.model, vocab, false, decoded, {}, tied ? `${dec}.embed_tokens` : undefined));
    outputs = [crossEntropyLoss(g, logits)];
  } else throw new Error(`Whisper has no ${ctx.head} head in WAP's catalogue`);
  // Seq2SeqModelOutput and Seq2SeqLMOutput list the encoder's last state after the decoder's, the logits and the loss.
  g.field('encoder_last_hidden_state', encoded);
  return outputs;
}

/** Marks a layer's parameters as not trained, as the module's `requires_grad_(False)` leaves them. */
function freeze(g: HfGraph, id: string): void {
  const layer = g.layers.find((l) => l.id === id);
  if (layer) layer.frozen = true;
}

/** Says where an input's shape comes from; the registry reports it as assumed with these words. */
function describeInput(g: HfGraph, id: string, why: string): void {
  const input = g.inputs.find((i) => i.id === id);
  if (input) input.assumed = why;
}
