/**
 * ModernBERT (modeling_modernbert.py, Warner et al. 2024, arXiv:2412.13663): a pre-norm encoder with rotary
 * positions, no position table, and alternating global and local attention. Its modules:
 *   model.embeddings.{tok_embeddings, norm, drop}
 *   → model.layers.N.{attn_norm (nn.Identity on layer 0), attn.{Wqkv, Wo}, mlp_norm, mlp.{Wi, Wo}}
 *   → model.final_norm
 * - attn.Wqkv writes the query, key and value features in that order (viewed [T, 3, heads, head_dim]), rotary
 *   embeddings go on the query and key heads, attn.Wo maps the heads back; biases only with attention_bias;
 * - mlp.Wi writes 2·intermediate features that ModernBertMLP chunks into input and gate: Wo(drop(act(input) · gate)),
 *   a GeGLU with hidden_activation; biases only with mlp_bias;
 * - every LayerNorm has a bias only when norm_bias (the released checkpoints: none);
 * - layer i attends globally when i % global_attn_every_n_layers == 0 and otherwise within local_attention // 2 tokens
 *   on each side (ModernBertAttention.local_attention; _update_attention_mask's |q − k| ≤ local_attention // 2).
 * Heads (ModernBertPredictionHead is head.dense → act (classifier_activation) → head.norm; dense has a bias only with
 * classifier_bias):
 * - base (ModernBertModel): last_hidden_state;
 * - masked-lm: head on every token → decoder, tied to tok_embeddings, with its own bias when decoder_bias;
 * - sequence-classification: classifier_pooling 'cls' (the first token) or 'mean' (masked mean over the tokens) →
 *   head → drop (classifier_dropout) → classifier (nn.Linear's default bias);
 * - token-classification and question-answering: head → drop → classifier on every token (QA: split into start and
 *   end logits).
 */
import { diagnosticAt } from '../../core/ir';
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { spanLogits } from './bert';

interface ModernBertDims {
  hidden: number;
  heads: number;
  intermediate: number;
  layers: number;
  vocab: number;
  normBias: boolean;
}

/** A LayerNorm with a weight, and a bias only when the config's norm_bias says so (nn.LayerNorm(bias=…), torch ≥ 2.1). */
function layerNorm(g: HfGraph, name: string, d: ModernBertDims, x: string): string {
  return g.norm(name, d.hidden, 'layernorm', x, 'LayerNorm', { center: d.normBias });
}

/** One section of a fused projection's output, as the modeling file views or chunks it (no copy). */
function section(g: HfGraph, name: string, fused: string, sizes: number[], index: number): string {
  return g.add(name, 'slice', 'split', { axis: -1, sizes, index }, [fused]);
}

/**
 * The kernels that skip the key tiles outside a local window: ModernBERT's flash_attention_forward hands
 * `window_size=local_attention` to flash_attn_varlen_qkvpacked_func. Its eager and sdpa paths add a mask over the
 * full score matrix (ModernBERT has no flex_attention path: _supports_flex_attn is False).
 */
function namedKernel(config: HfConfig): string | undefined {
  const named = config._attn_implementation ?? config.attn_implementation;
  return typeof named === 'string' ? named : undefined;
}

/** Σ over T queries of the keys |q − k| ≤ half reaches: T for the query itself plus each side's min(i, half). */
function keysWithinWindow(tokens: number, half: number): number {
  const side = tokens <= half + 1 ? (tokens * (tokens - 1)) / 2 : (half * (half + 1)) / 2 + (tokens - 1 - half) * half;
  return tokens + 2 * side;
}

/** `0, 2, 4, …, 24` for a long list, every index for a short one. */
function layerList(layers: readonly number[]): string {
  return layers.length <= 5 ? layers.join(', ') : `${layers.slice(0, 3).join(', ')}, …, ${layers[layers.length - 1]}`;
}

/**
 * Each layer's attention window as WAP prices it. The window is bidirectional, so the sdpa node's `window` is the
 * count of keys a query reaches (2·⌊local_attention / 2⌋ + 1): the catalogue prices that many keys a row, as it
 * prices a causal window's. It is set only where the code runs flash_attention_2; elsewhere the note says what a
 * windowed kernel would skip.
 */
function localWindows(ctx: BuildContext, layers: number): (layer: number) => number | undefined {
  const { graph: g, config } = ctx;
  const every = intField(config, 'global_attn_every_n_layers');
  const local = intField(config, 'local_attention');
  if (every < 1) throw new Error(`global_attn_every_n_layers must be at least 1, got ${every}`);
  const windowed = Array.from({ length: layers }, (_, i) => i).filter((i) => i % every !== 0);
  if (windowed.length === 0) return () => undefined;
  const half = Math.floor(local / 2);
  const keys = 2 * half + 1;
  const tokens = ctx.seqLen;
  const which = `${windowed.length} of ${layers} layers (${layerList(windowed)}) attend a local window of ${local} tokens (${half} on each side, ${keys} keys a query)`;
  const kernel = namedKernel(config);
  if (kernel === 'flash_attention_2') {
    g.diagnostics.push(diagnosticAt('info', 'hf-sliding-window', `modernbert: ${which}, and the code runs flash_attention_2, which skips the keys outside it: WAP prices those layers' attention over ${Math.min(keys, tokens)} keys a query (${(100 * Math.min(1, keys / tokens)).toFixed(0)}% of the ${tokens}-token rows at the configured length)`, g.range));
    const set = new Set(windowed);
    return (layer) => (set.has(layer) ? keys : undefined);
  }
  const kept = keysWithinWindow(tokens, half) / (tokens * tokens);
  // With no attn_implementation, ModernBertPreTrainedModel._check_and_adjust_attn_implementation picks
  // flash_attention_2 whenever the flash-attn package can dispatch, which WAP cannot see from the code.
  const unnamed = kernel === undefined ? '; with no attn_implementation, transformers loads ModernBERT with flash_attention_2 when the flash-attn package is installed (sdpa otherwise)' : '';
  const effect = kept < 1 ? `flash_attention_2 would compute ${(100 * kept).toFixed(0)}% of those layers' scores at the configured ${tokens} tokens, so for it their attention is over-estimated (attn_implementation="flash_attention_2" in the code prices the window)` : `the window spans the configured ${tokens} tokens, so nothing is over-estimated at that length`;
  g.diagnostics.push(diagnosticAt('info', 'hf-sliding-window', `modernbert: ${which}; WAP prices them over the full sequence, as ${kernel ?? 'sdpa'} attention computes it (the window is a mask there)${unnamed}; ${effect}`, g.range));
  return () => undefined;
}

export function buildModernBert(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d: ModernBertDims = {
    hidden: intField(config, 'hidden_size'),
    heads: intField(config, 'num_attention_heads'),
    intermediate: intField(config, 'intermediate_size'),
    layers: intField(config, 'num_hidden_layers'),
    vocab: intField(config, 'vocab_size'),
    normBias: boolField(config, 'norm_bias', false),
  };
  if (d.heads < 1 || d.hidden % d.heads !== 0) throw new Error(`hidden_size ${d.hidden} is not a multiple of num_attention_heads ${d.heads}`);
  const attnBias = boolField(config, 'attention_bias', false);
  const mlpBias = boolField(config, 'mlp_bias', false);
  const attnDrop = rateField(config, 'attention_dropout');
  const base = ctx.head === 'base' ? '' : 'model.';
  const windowOf = localWindows(ctx, d.layers);

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const embedded = layerNorm(g, `${base}embeddings.norm`, d, g.embedding(`${base}embeddings.tok_embeddings`, d.vocab, d.hidden, ids));
  let h = g.dropout(`${base}embeddings.drop`, rateField(config, 'embedding_dropout'), embedded);
  const thirds = [d.hidden, d.hidden, d.hidden];
  const halves = [d.intermediate, d.intermediate];
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}layers.${i}`;
    // ModernBertEncoderLayer: attn_norm is nn.Identity on layer 0 (the embeddings were just normalised).
    const normed = i === 0 ? h : layerNorm(g, `${p}.attn_norm`, d, h);
    const qkv = g.linear(`${p}.attn.Wqkv`, d.hidden, 3 * d.hidden, attnBias, normed);
    const [q, k, v] = ['query', 'key', 'value'].map((role, j) => section(g, `${p}.attn.${role}`, qkv, thirds, j));
    const attended = g.attention(`${p}.attn`, q, k, v, { heads: d.heads, kvHeads: d.heads, headDim: d.hidden / d.heads, causal: false, rotary: true, dropout: attnDrop, window: windowOf(i) });
    // out_drop is nn.Dropout(attention_dropout) only when that is above 0, else nn.Identity: g.dropout adds nothing at 0.
    const out = g.dropout(`${p}.attn.out_drop`, attnDrop, g.linear(`${p}.attn.Wo`, d.hidden, d.hidden, attnBias, attended));
    const r1 = g.sum(`${p}.residual_attn`, [h, out]);
    const wi = g.linear(`${p}.mlp.Wi`, d.hidden, 2 * d.intermediate, mlpBias, layerNorm(g, `${p}.mlp_norm`, d, r1));
    const input = section(g, `${p}.mlp.input`, wi, halves, 0);
    const gate = section(g, `${p}.mlp.gate`, wi, halves, 1);
    const gated = g.mul(`${p}.mlp.mul`, [g.act(`${p}.mlp.act`, strField(config, 'hidden_activation', 'gelu'), input), gate]);
    const mlp = g.linear(`${p}.mlp.Wo`, d.intermediate, d.hidden, mlpBias, g.dropout(`${p}.mlp.drop`, rateField(config, 'mlp_dropout'), gated));
    h = g.sum(`${p}.residual_mlp`, [r1, mlp]);
  }
  h = layerNorm(g, `${base}final_norm`, d, h);
  return modernBertHead(ctx, h, d, `${base}embeddings.tok_embeddings`);
}

/** ModernBertPredictionHead: dense (bias only with classifier_bias) → classifier_activation → norm. */
function predictionHead(ctx: BuildContext, x: string, d: ModernBertDims): string {
  const { graph: g, config } = ctx;
  const dense = g.linear('head.dense', d.hidden, d.hidden, boolField(config, 'classifier_bias', false), x);
  return layerNorm(g, 'head.norm', d, g.act('head.act', strField(config, 'classifier_activation', 'gelu'), dense));
}

/**
 * ModernBertForSequenceClassification's pooling: the first token ('cls'), or the attention-masked mean over the
 * tokens ('mean': (h · mask).sum(dim=1) / mask.sum(dim=1), a product, a sum over the tokens and a divide).
 */
function pooled(ctx: BuildContext, h: string): string {
  const g = ctx.graph;
  const pooling = strField(ctx.config, 'classifier_pooling', 'cls');
  if (pooling === 'cls') return g.add('pooling.first_token', 'select first token', 'split', { axis: 1, sizes: [1], index: 0 }, [h]);
  if (pooling !== 'mean') throw new Error(`classifier_pooling must be 'cls' or 'mean', got '${pooling}'`);
  const masked = g.mul('pooling.mask', [h]);
  const summed = g.add('pooling.sum', 'Tensor.sum', 'reduce', { fn: 'sum', axes: [1], keepDims: false }, [masked]);
  return g.mul('pooling.mean', [summed]);
}

function modernBertHead(ctx: BuildContext, h: string, d: ModernBertDims, embeddingKey: string): string[] {
  const { graph: g, config } = ctx;
  const labels = (): number => intField(config, 'num_labels', 2);
  const classifierDrop = (x: string): string => g.dropout('drop', rateField(config, 'classifier_dropout'), x);
  switch (ctx.head) {
    case 'base':
      return [g.field('last_hidden_state', h)];
    case 'masked-lm': {
      // sparse_prediction runs the head on the labelled tokens only; which share they are is the data collator's.
      if (boolField(config, 'sparse_prediction', false)) g.diagnostics.push(diagnosticAt('info', 'hf-sparse-prediction', 'modernbert: sparse_prediction runs the masked-LM head on the masked tokens only (their share is the data collator\'s mlm_probability); WAP prices the head on every token', g.range));
      const tied = boolField(config, 'tie_word_embeddings', true);
      const decoder = g.linear('decoder', d.hidden, d.vocab, boolField(config, 'decoder_bias', true), predictionHead(ctx, h, d), {}, tied ? embeddingKey : undefined);
      return [g.field('logits', decoder)];
    }
    case 'sequence-classification':
      return [g.field('logits', g.linear('classifier', d.hidden, labels(), true, classifierDrop(predictionHead(ctx, pooled(ctx, h), d))))];
    case 'token-classification':
      return [g.field('logits', g.linear('classifier', d.hidden, labels(), true, classifierDrop(predictionHead(ctx, h, d))))];
    case 'question-answering': {
      if (labels() !== 2) throw new Error(`question answering splits the classifier into start and end logits: num_labels must be 2, got ${labels()}`);
      return spanLogits(g, g.linear('classifier', d.hidden, 2, true, classifierDrop(predictionHead(ctx, h, d))));
    }
    default:
      throw new Error(`ModernBERT has no ${ctx.head} head in WAP's catalogue`);
  }
}
