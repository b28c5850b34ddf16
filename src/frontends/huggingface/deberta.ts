/**
 * DeBERTa-v2 and DeBERTa-v3 (model_type 'deberta-v2'; He et al. 2021, arXiv:2006.03654 and arXiv:2111.09543) as
 * transformers' refactored modeling_deberta_v2.py builds them, the one whose DebertaV2Config has `legacy` to pick the
 * masked-LM head (before it, the same modules with StableDropout and XSoftmax, and only the legacy head):
 *   deberta.embeddings.{word_embeddings, position_embeddings (only with position_biased_input),
 *     token_type_embeddings (only with type_vocab_size > 0), embed_proj (only when embedding_size ≠ hidden_size),
 *     LayerNorm} → deberta.encoder.layer.N.{attention.self.{query_proj, key_proj, value_proj},
 *     attention.output.{dense, LayerNorm}, intermediate.dense, output.{dense, LayerNorm}}
 *   with deberta.encoder.rel_embeddings (2·position_buckets rows, else 2·max_relative_positions) normalised once by
 *   deberta.encoder.LayerNorm when norm_rel_ebd names layer_norm, and deberta.encoder.conv after layer 0 when
 *   conv_kernel_size > 0 (DeBERTa-v2-xlarge's; DeBERTa-v3 has none).
 * Disentangled attention (DisentangledSelfAttention) runs eagerly, bmm by bmm: no fused kernel takes its score bias.
 * Besides the content scores Q·Kᵀ it adds, per pos_att_type,
 * - c2p: Q against the projected relative embeddings, bmm(Q, P_kᵀ) over all 2·span relative positions, then
 *   torch.gather picks each (query, key) pair's relative position out of the [T, 2·span] rows;
 * - p2c: bmm(K, P_qᵀ), gathered the same way and transposed;
 * where P_k = key_proj(rel) and P_q = query_proj(rel) when share_att_key (DeBERTa-v3), else the layer's own
 * pos_key_proj and pos_query_proj. Every term is divided by √(head_dim · scale_factor), scale_factor being 1 plus
 * one per position term. Heads:
 * - base (DebertaV2Model): the last hidden state, no pooler;
 * - masked-lm: with config.legacy (the default) cls.predictions.{transform.dense (hidden → embedding_size),
 *   transform.LayerNorm, decoder} tied to the word embeddings, the decoder's bias being cls.predictions.bias; with
 *   legacy false lm_predictions.lm_head.{dense, LayerNorm} and a product with the word embeddings plus lm_head.bias;
 * - sequence-classification: pooler (ContextPooler: first token → dropout → dense → pooler_hidden_act) → dropout
 *   (cls_dropout, else hidden_dropout_prob) → classifier;
 * - token-classification: dropout (hidden_dropout_prob) → classifier; question-answering: qa_outputs.
 */
import { diagnosticAt, type AttrValue } from '../../core/ir';
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';
import { spanLogits } from './bert';

interface DebertaDims {
  hidden: number;
  heads: number;
  headDim: number;
  intermediate: number;
  layers: number;
  vocab: number;
  embedding: number;
  act: string;
  hiddenDrop: number;
}

/** The relative-position attention a config asks for (DebertaV2Encoder and DisentangledSelfAttention's reading of it). */
interface Relative {
  /** Rows of rel_embeddings: 2·position_buckets, else 2·max_relative_positions (max_position_embeddings below 1). */
  rows: number;
  c2p: boolean;
  p2c: boolean;
  shareKey: boolean;
  layerNorm: boolean;
}

/** A config integer that may be negative (-1 means "unset" for max_relative_positions and position_buckets). */
function signedInt(config: HfConfig, key: string, fallback: number): number {
  const v = config[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`config field '${key}' must be an integer, got ${JSON.stringify(v)}`);
  return v;
}

/** A '|'-separated string or a list of names, lower-cased (DebertaV2Config's pos_att_type; the encoder's norm_rel_ebd). */
function nameList(v: AttrValue | undefined): string[] {
  if (typeof v === 'string') return v.toLowerCase().split('|').map((x) => x.trim()).filter(Boolean);
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string').map((x) => x.trim().toLowerCase());
  return [];
}

function relativeOf(config: HfConfig): Relative | undefined {
  if (!boolField(config, 'relative_attention', false)) return undefined;
  const types = nameList(config.pos_att_type);
  let maxRelative = signedInt(config, 'max_relative_positions', -1);
  if (maxRelative < 1) maxRelative = intField(config, 'max_position_embeddings');
  const buckets = signedInt(config, 'position_buckets', -1);
  return {
    rows: 2 * (buckets > 0 ? buckets : maxRelative),
    c2p: types.includes('c2p'),
    p2c: types.includes('p2c'),
    shareKey: boolField(config, 'share_att_key', false),
    layerNorm: nameList(config.norm_rel_ebd ?? 'none').includes('layer_norm'),
  };
}

/** transpose_for_scores: [rows, heads·d] → [heads, rows, d] (a view and a permute; the token count stays -1). */
function toHeads(g: HfGraph, name: string, x: string, d: DebertaDims): string {
  const viewed = g.add(`${name}_view`, 'view', 'reshape', { shape: [-1, d.heads, d.headDim] }, [x]);
  return g.add(`${name}_transpose`, 'permute', 'permute', { dims: [0, 2, 1, 3] }, [viewed]);
}

/**
 * torch.gather(scores, -1, index) over the [heads, T, 2·span] relative scores with the [T, T] relative-position
 * index: the result has the index's shape. WAP's gather op takes a constant index shape, which would pin the
 * sequence length the analysis may change, so the gather is written as what it costs, one read-and-write per output
 * element: an element op broadcasting the rows ([heads, T, 1], a slice: no copy) over the index ([T, T]). Its backward
 * is a scatter-add of as many elements and keeps only the index, as gather_backward does.
 */
function gatherRelative(g: HfGraph, name: string, scores: string, index: string): string {
  const rows = g.add(`${name}_rows`, 'slice', 'split', { axis: -1, sizes: [1], index: 0 }, [scores]);
  return g.add(name, 'torch.gather', 'add', { gather: 'dim=-1 by the relative-position index' }, [rows, index]);
}

/**
 * What transformers computes once per forward on no sample's data (core/oncePerForward.ts): the relative positions,
 * the LayerNorm of rel_embeddings (DebertaV2Encoder.get_rel_embedding), and in every layer pos_dropout on those rows
 * and their projections. DisentangledSelfAttention.disentangled_attention_bias (modeling_deberta_v2.py) slices
 * `rel_embeddings[0 : att_span * 2, :].unsqueeze(0)`, a batch of one, projects it with query_proj / key_proj (or
 * pos_query_proj / pos_key_proj), and only then `.repeat(query_layer.size(0) // num_attention_heads, 1, 1)` copies
 * the projected rows for every sample.
 */
const ONCE_PER_FORWARD = { oncePerForward: true } as const;

/**
 * The relative position of every (query, key) pair, q − k, log-bucketed past position_buckets / 2
 * (build_relative_position, make_log_bucket_position): computed once per forward on the [T, T] grid of token ids, as
 * T5's relative positions are; the bucketing's few element ops on that grid are folded into the one node.
 */
function relativePositions(g: HfGraph, prefix: string, ids: string): string {
  const queries = g.add(`${prefix}.q_ids`, 'arange[:, None]', 'reshape', { shape: [-1, 1], ...ONCE_PER_FORWARD }, [ids]);
  const keys = g.add(`${prefix}.k_ids`, 'arange[None, :]', 'reshape', { shape: [1, -1], ...ONCE_PER_FORWARD }, [ids]);
  return g.add(`${prefix}.relative_pos`, 'build_relative_position', 'add', { ...ONCE_PER_FORWARD }, [queries, keys]);
}

/** A division by the scale √(d · scale_factor) (scaled_size_sqrt): one element op, `factor` its reciprocal. */
function scaled(g: HfGraph, name: string, x: string, factor: number): string {
  return g.add(name, 'div', 'mul', { factor }, [x]);
}

/** DisentangledSelfAttention on x: the content scores plus the c2p and p2c terms, softmax, dropout, · V. */
function disentangledAttention(g: HfGraph, p: string, x: string, d: DebertaDims, rel: Relative | undefined, relEmb: string | undefined, relPos: string | undefined, attnDrop: number, factor: number): string {
  const all = d.heads * d.headDim;
  const qh = toHeads(g, `${p}.query_layer`, g.linear(`${p}.query_proj`, d.hidden, all, true, x), d);
  const kh = toHeads(g, `${p}.key_layer`, g.linear(`${p}.key_proj`, d.hidden, all, true, x), d);
  const vh = toHeads(g, `${p}.value_layer`, g.linear(`${p}.value_proj`, d.hidden, all, true, x), d);
  // bmm(Q, Kᵀ / scale): the refactored file divides the keys, not the scores.
  let scores = g.add(`${p}.content_scores`, 'torch.bmm', 'matmul', { transposeB: true }, [qh, scaled(g, `${p}.key_scale`, kh, factor)]);
  if (rel && relEmb && relPos && (rel.c2p || rel.p2c)) {
    // pos_dropout on the (already normalised) relative embeddings, then each term's projection of all 2·span rows:
    // once per forward, not per sample (ONCE_PER_FORWARD). Their weight gradients are the projections' own, as trained.
    const relIn = d.hiddenDrop > 0 ? g.add(`${p}.pos_dropout`, 'Dropout', 'dropout', { rate: d.hiddenDrop, ...ONCE_PER_FORWARD }, [relEmb]) : relEmb;
    // With share_att_key the layer's own key_proj / query_proj run again on the relative rows (name#2 shares weights).
    // The head split after it stays per sample: its permute is priced as the copy `.repeat` makes for every sample.
    const project = (own: string, pos: string): string => g.linear(rel.shareKey ? `${p}.${own}` : `${p}.${pos}`, d.hidden, all, true, relIn, ONCE_PER_FORWARD);
    const terms: string[] = [];
    if (rel.c2p) {
      const posKey = toHeads(g, `${p}.pos_key_layer`, project('key_proj', 'pos_key_proj'), d);
      const c2p = g.add(`${p}.c2p_att`, 'torch.bmm', 'matmul', { transposeB: true }, [qh, posKey]);
      terms.push(scaled(g, `${p}.c2p_scale`, gatherRelative(g, `${p}.c2p_gather`, c2p, relPos), factor));
    }
    if (rel.p2c) {
      const posQuery = toHeads(g, `${p}.pos_query_layer`, project('query_proj', 'pos_query_proj'), d);
      const p2c = g.add(`${p}.p2c_att`, 'torch.bmm', 'matmul', { transposeB: true }, [kh, posQuery]);
      const byKey = gatherRelative(g, `${p}.p2c_gather`, p2c, relPos);
      const byQuery = g.add(`${p}.p2c_transpose`, 'transpose', 'permute', { swap: [-1, -2] }, [byKey]);
      terms.push(scaled(g, `${p}.p2c_scale`, byQuery, factor));
    }
    const relAtt = terms.length === 1 ? terms[0] : g.sum(`${p}.rel_att`, terms);
    scores = g.sum(`${p}.attention_scores`, [scores, relAtt]);
  }
  const masked = g.act(`${p}.masked_fill`, 'masked_fill', scores, 'Tensor.masked_fill');
  const probs = g.dropout(`${p}.dropout`, attnDrop, g.add(`${p}.softmax`, 'softmax', 'activation', { fn: 'softmax', axis: -1 }, [masked]));
  const context = g.add(`${p}.context_layer`, 'torch.bmm', 'matmul', {}, [probs, vh]);
  const back = g.add(`${p}.context_transpose`, 'permute', 'permute', { dims: [0, 2, 1, 3] }, [context]);
  return g.add(`${p}.context_view`, 'view', 'reshape', { shape: [-1, all] }, [back]);
}

/** ConvLayer after layer 0: conv over the embeddings, masked, act(dropout(·)), LayerNorm(layer-0 output + ·), masked. */
function convLayer(g: HfGraph, prefix: string, config: HfConfig, embedded: string, residual: string, d: DebertaDims): string {
  const kernel = intField(config, 'conv_kernel_size');
  const groups = intField(config, 'conv_groups', 1);
  if (groups < 1 || d.hidden % groups !== 0) throw new Error(`conv_groups ${groups} does not divide hidden_size ${d.hidden}`);
  const pad = Math.floor((kernel - 1) / 2);
  const channelsFirst = g.add(`${prefix}.permute`, 'permute', 'permute', { dims: [0, 2, 1] }, [embedded]);
  const conv = g.add(`${prefix}.conv`, 'Conv1d', 'conv', { rank: 1, inChannels: d.hidden, outChannels: d.hidden, kernel: [kernel], stride: [1], padding: [[pad, pad]], dilation: [1], groups, bias: true }, [channelsFirst]);
  const back = g.add(`${prefix}.permute_back`, 'permute', 'permute', { dims: [0, 2, 1] }, [conv]);
  const masked = g.act(`${prefix}.masked_fill`, 'masked_fill', back, 'Tensor.masked_fill_');
  const activated = g.act(`${prefix}.conv_act`, strField(config, 'conv_act', 'tanh'), g.dropout(`${prefix}.dropout`, d.hiddenDrop, masked));
  const normed = g.norm(`${prefix}.LayerNorm`, d.hidden, 'layernorm', g.sum(`${prefix}.residual`, [residual, activated]));
  return g.mul(`${prefix}.input_mask`, [normed]);
}

/**
 * The relative-embedding path is computed once per forward in transformers (LayerNorm of rel_embeddings), and per
 * layer once per batch (pos_dropout, the projections of its rows, before `.repeat` copies them for every sample), and
 * priced so (ONCE_PER_FORWARD), in time and in the rows each layer keeps for the backward. Said, with its size and
 * what stays per sample.
 */
function noteRelativePath(g: HfGraph, rel: Relative, d: DebertaDims, layers: number): void {
  const projections = (rel.c2p ? 1 : 0) + (rel.p2c ? 1 : 0);
  if (projections === 0) return;
  const flops = projections * 2 * rel.rows * d.hidden * d.heads * d.headDim;
  const share = rel.shareKey ? "the layer's own key_proj / query_proj (share_att_key)" : 'pos_key_proj / pos_query_proj';
  const alongside = [d.hiddenDrop > 0 ? 'pos_dropout on those rows' : '', rel.layerNorm ? "the encoder's LayerNorm of rel_embeddings" : '', 'the [T, T] relative positions'].filter(Boolean).join(', ');
  g.diagnostics.push(diagnosticAt('info', 'hf-relative-embeddings', `deberta-v2: each of the ${layers} layers projects the ${rel.rows} relative-position embeddings with ${share}, ${(flops / 1e9).toFixed(2)} GFLOP forward a layer, as much as projecting ${rel.rows} tokens; transformers runs it once per batch, on a [1, ${rel.rows}, ${d.hidden}] tensor, and repeats the result for every sample, and WAP prices it so: once per forward whatever the micro-batch, with ${alongside}; the ${rel.rows} × ${d.hidden} rows each layer keeps for the backward counted once; the copy .repeat makes is priced per sample`, g.range));
}

function dimsOf(config: HfConfig): DebertaDims {
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  if (heads < 1 || hidden % heads !== 0) throw new Error(`hidden_size ${hidden} is not a multiple of num_attention_heads ${heads}`);
  const headDim = intField(config, 'attention_head_size', hidden / heads);
  // DebertaV2SelfOutput's dense is hidden → hidden: heads·attention_head_size must be the hidden size.
  if (heads * headDim !== hidden) throw new Error(`num_attention_heads × attention_head_size (${heads} × ${headDim}) must equal hidden_size ${hidden}`);
  return {
    hidden, heads, headDim,
    intermediate: intField(config, 'intermediate_size'),
    layers: intField(config, 'num_hidden_layers'),
    vocab: intField(config, 'vocab_size'),
    embedding: intField(config, 'embedding_size', hidden),
    act: strField(config, 'hidden_act', 'gelu'),
    hiddenDrop: rateField(config, 'hidden_dropout_prob'),
  };
}

export function buildDebertaV2(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const d = dimsOf(config);
  const rel = relativeOf(config);
  const attnDrop = rateField(config, 'attention_probs_dropout_prob');
  // scale_factor is 1 plus one for each of c2p and p2c in pos_att_type (read even without relative_attention); every
  // term is divided by √(head_dim · scale_factor).
  const types = nameList(config.pos_att_type);
  const factor = 1 / Math.sqrt(d.headDim * (1 + (types.includes('c2p') ? 1 : 0) + (types.includes('p2c') ? 1 : 0)));
  const base = ctx.head === 'base' ? '' : 'deberta.';

  const ids = g.input('input_ids', [ctx.seqLen], 'int');
  const e = `${base}embeddings`;
  const parts = [g.embedding(`${e}.word_embeddings`, d.vocab, d.embedding, ids)];
  if (boolField(config, 'position_biased_input', true)) parts.push(g.add(`${e}.position_embeddings`, 'Embedding (positions of input_ids)', 'embedding', { numEmbeddings: intField(config, 'max_position_embeddings'), embeddingDim: d.embedding }, [ids]));
  if (intField(config, 'type_vocab_size', 0) > 0) parts.push(g.add(`${e}.token_type_embeddings`, 'Embedding (token types of input_ids)', 'embedding', { numEmbeddings: intField(config, 'type_vocab_size'), embeddingDim: d.embedding }, [ids]));
  let h = parts.length === 1 ? parts[0] : g.sum(`${e}.sum`, parts);
  if (d.embedding !== d.hidden) h = g.linear(`${e}.embed_proj`, d.embedding, d.hidden, false, h);
  // DebertaV2Model passes the attention mask (ones when none is given) to the embeddings, which multiply by it.
  h = g.dropout(`${e}.dropout`, d.hiddenDrop, g.mul(`${e}.mask`, [g.norm(`${e}.LayerNorm`, d.hidden, 'layernorm', h)]));
  const embedded = h;

  let relEmb: string | undefined;
  let relPos: string | undefined;
  if (rel) {
    // nn.Embedding whose weight is read whole (get_rel_embedding), never looked up: a parameter node of its rows.
    relEmb = g.add(`${base}encoder.rel_embeddings.weight`, 'Embedding.weight', 'parameter', { shape: [rel.rows, d.hidden] }, []);
    if (rel.layerNorm) relEmb = g.norm(`${base}encoder.LayerNorm`, d.hidden, 'layernorm', relEmb, undefined, ONCE_PER_FORWARD);
    relPos = relativePositions(g, `${base}encoder`, ids);
    noteRelativePath(g, rel, d, d.layers);
  }
  for (let i = 0; i < d.layers; i++) {
    const p = `${base}encoder.layer.${i}`;
    const attended = disentangledAttention(g, `${p}.attention.self`, h, d, rel, relEmb, relPos, attnDrop, factor);
    const dense = g.dropout(`${p}.attention.output.dropout`, d.hiddenDrop, g.linear(`${p}.attention.output.dense`, d.hidden, d.hidden, true, attended));
    const n1 = g.norm(`${p}.attention.output.LayerNorm`, d.hidden, 'layernorm', g.sum(`${p}.attention.output.residual`, [dense, h]));
    const up = g.act(`${p}.intermediate.intermediate_act_fn`, d.act, g.linear(`${p}.intermediate.dense`, d.hidden, d.intermediate, true, n1));
    const down = g.dropout(`${p}.output.dropout`, d.hiddenDrop, g.linear(`${p}.output.dense`, d.intermediate, d.hidden, true, up));
    h = g.norm(`${p}.output.LayerNorm`, d.hidden, 'layernorm', g.sum(`${p}.output.residual`, [down, n1]));
    if (i === 0 && intField(config, 'conv_kernel_size', 0) > 0) h = convLayer(g, `${base}encoder.conv`, config, embedded, h, d);
  }
  return debertaHead(ctx, h, d, `${e}.word_embeddings`);
}

function debertaHead(ctx: BuildContext, h: string, d: DebertaDims, wordEmbeddings: string): string[] {
  const { graph: g, config } = ctx;
  const labels = (): number => intField(config, 'num_labels', 2);
  switch (ctx.head) {
    case 'base':
      return [g.field('last_hidden_state', h)];
    case 'masked-lm': {
      if (boolField(config, 'legacy', true)) {
        const t = 'cls.predictions.transform';
        const normed = g.norm(`${t}.LayerNorm`, d.embedding, 'layernorm', g.act(`${t}.transform_act_fn`, d.act, g.linear(`${t}.dense`, d.hidden, d.embedding, true, h)));
        // decoder.weight is the word embeddings when tied; its bias is cls.predictions.bias (one vocabulary row).
        const tied = boolField(config, 'tie_word_embeddings', true);
        return [g.field('logits', g.linear('cls.predictions.decoder', d.embedding, d.vocab, true, normed, {}, tied ? wordEmbeddings : undefined))];
      }
      // DebertaV2LMPredictionHead: matmul(hidden, word_embeddings.weight.t()) + bias, always the input table.
      if (d.embedding !== d.hidden) throw new Error(`the non-legacy masked-LM head multiplies hidden states (${d.hidden}) by the word embeddings (${d.embedding}): they must match`);
      const l = 'lm_predictions.lm_head';
      const normed = g.norm(`${l}.LayerNorm`, d.hidden, 'layernorm', g.act(`${l}.transform_act_fn`, d.act, g.linear(`${l}.dense`, d.hidden, d.hidden, true, h)));
      return [g.field('logits', g.linear(l, d.hidden, d.vocab, true, normed, {}, wordEmbeddings))];
    }
    case 'sequence-classification': {
      const poolerSize = intField(config, 'pooler_hidden_size', d.hidden);
      if (poolerSize !== d.hidden) throw new Error(`ContextPooler's dense is pooler_hidden_size (${poolerSize}) wide on the hidden states (${d.hidden}): they must match`);
      const first = g.add('pooler.first_token', 'select first token', 'split', { axis: 1, sizes: [1], index: 0 }, [h]);
      const dense = g.linear('pooler.dense', poolerSize, poolerSize, true, g.dropout('pooler.dropout', rateField(config, 'pooler_dropout'), first));
      const pooled = g.act('pooler.activation', strField(config, 'pooler_hidden_act', 'gelu'), dense);
      const dropped = g.dropout('dropout', rateField(config, 'cls_dropout', d.hiddenDrop), pooled);
      return [g.field('logits', g.linear('classifier', d.hidden, labels(), true, dropped))];
    }
    case 'token-classification':
      return [g.field('logits', g.linear('classifier', d.hidden, labels(), true, g.dropout('dropout', d.hiddenDrop, h)))];
    case 'question-answering':
      if (labels() !== 2) throw new Error(`question answering splits qa_outputs into start and end logits: num_labels must be 2, got ${labels()}`);
      return spanLogits(g, g.linear('qa_outputs', d.hidden, 2, true, h));
    default:
      throw new Error(`DeBERTa-v2 has no ${ctx.head} head in WAP's catalogue`);
  }
}
