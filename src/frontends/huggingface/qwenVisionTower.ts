/**
 * The vision towers of Qwen2-VL and Qwen2.5-VL with their patch mergers, as transformers builds them
 * (modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel, modeling_qwen2_5_vl.py
 * Qwen2_5_VisionTransformerPretrainedModel), under the composite's `visual` (multimodal.ts says which layout):
 *   visual.patch_embed.proj      Conv3d(C, width, kernel = stride = [temporal_patch_size, patch_size, patch_size], no bias)
 *   visual.blocks.N.{norm1, attn.qkv, attn.proj, norm2, mlp.…}
 *   visual.merger.{ln_q, mlp.0, mlp.2}   ln_q → view(-1, width·merge²) → Linear → GELU → Linear(width·merge², out)
 * What differs between the two:
 * - Qwen2-VL (Qwen2VLVisionConfig): the width is embed_dim; norm1, norm2 and ln_q are nn.LayerNorm (weight and bias);
 *   the MLP is fc1 → hidden_act (quick_gelu) → fc2 of embed_dim·mlp_ratio; the merger projects to the vision config's
 *   hidden_size (the language model's width); every block attends the whole image;
 * - Qwen2.5-VL (Qwen2_5_VLVisionConfig): the width is hidden_size; the norms are Qwen2RMSNorm (weight only); the MLP is
 *   gated, down_proj(act(gate_proj(x)) · up_proj(x)) of intermediate_size, every Linear with a bias (Qwen2_5_VLMLP
 *   with bias=True), hidden_act silu; the merger projects to out_hidden_size; the blocks outside fullatt_block_indexes
 *   attend within windows (below).
 * Both: attn.qkv is one Linear(width, 3·width) with a bias, split into num_heads heads; attn.proj has a bias; the
 * positions are 2-D rotary (apply_rotary_pos_emb_vision, q·cos + rotate_half(q)·sin and the same for k): no parameters,
 * priced as the decoder's rotary products are (graph.ts); no position table, class token or dropout.
 *
 * The input: the processor (Qwen2VLImageProcessor, which Qwen2.5-VL reuses) resizes the image to multiples of
 * patch_size·spatial_merge_size, repeats a still image temporal_patch_size times and hands the model `pixel_values` of
 * one row per patch, C·T·P·P values each, ordered so that each merge² neighbours are consecutive rows. The patch Conv3d,
 * whose kernel is its stride and the whole patch, takes one dot product per filter per row: it is priced as a bias-free
 * Linear(C·T·P², width) over the rows, with the Conv3d's C·T·P²·width weights (stored [width, C, T, P, P]).
 *
 * Window attention (Qwen2.5-VL, get_window_index): windows of (window_size // spatial_merge_size // patch_size)² merged
 * tokens (112 // 2 // 14 = 4: 4×4 merged tokens, 64 patches). The patches are gathered window by window
 * (hidden_states[window_index]) and a windowed block attends with cu_window_seqlens: each window's tokens attend only
 * each other. WAP views q, k and v as [windows, window patches, heads, head_dim] before the sdpa node, so the scores are
 * windows × heads × window_patches² (16 × 16 × 64² at 448×448) instead of heads × patches² (16 × 1024²); a full-attention
 * block views one window of every patch. That is the work of flash_attention_2's varlen kernel and of current
 * transformers' eager and sdpa paths, which split q, k and v per window; transformers 4.50's eager and sdpa vision
 * attention built a block mask over all patches and computed every score (said in the info). After the merger the
 * tokens go back to raster order (hidden_states[reverse_indices]). Both gathers copy without arithmetic; they are
 * named here as reshape nodes, views that WAP prices as free, which leaves out the copies' memory traffic (one read
 * and one write of 1024 × 1280 and 256 × out elements an image, small beside a block's).
 */
import { intField, strField, type HfConfig } from './configs';
import type { HfGraph } from './graph';
import { visionActivation } from './visionTowers';

export type QwenVisionVariant = 'qwen2_vl' | 'qwen2_5_vl';

/**
 * Merged tokens in the image a sample is assumed to hold: 256, the lower end of the visual-token range Qwen's
 * Qwen2.5-VL model card suggests setting (`min_pixels = 256*28*28, max_pixels = 1280*28*28`, "a token range of
 * 256-1280"). At patch 14 and merge 2 that is a 448×448 image: 32×32 patches, 1024 patches, 16×16 = 256 merged tokens,
 * which the processor keeps as it is (a multiple of 28 within its pixel bounds).
 */
export const ASSUMED_IMAGE_TOKENS = 256;

/** The tower's sizes, read from a vision config with its class's defaults filled in. */
export interface QwenVisionDims {
  width: number;
  heads: number;
  depth: number;
  channels: number;
  patch: number;
  temporal: number;
  merge: number;
  /** The merger's output: the language model's width. */
  out: number;
  /** The MLP's inner width. */
  inner: number;
  act: string;
}

export function qwenVisionDims(vision: HfConfig, variant: QwenVisionVariant): QwenVisionDims {
  const v25 = variant === 'qwen2_5_vl';
  const width = intField(vision, v25 ? 'hidden_size' : 'embed_dim');
  // The released files say in_chans; the config classes name the field in_channels (default 3).
  const channels = intField(vision, 'in_channels', intField(vision, 'in_chans', 3));
  const heads = intField(vision, 'num_heads');
  if (heads < 1 || width % heads !== 0) throw new Error(`the vision width ${width} is not divisible by num_heads ${heads}`);
  // Qwen2VLVisionBlock: mlp_hidden_dim = int(embed_dim * mlp_ratio).
  const ratio = vision.mlp_ratio;
  if (!v25 && (typeof ratio !== 'number' || !(ratio > 0))) throw new Error(`vision_config.mlp_ratio must be a positive number, got ${JSON.stringify(ratio)}`);
  const inner = v25 ? intField(vision, 'intermediate_size') : Math.floor(width * (ratio as number));
  return {
    width, heads, depth: intField(vision, 'depth'), channels, patch: intField(vision, 'patch_size'), temporal: intField(vision, 'temporal_patch_size'),
    merge: intField(vision, 'spatial_merge_size'), out: intField(vision, v25 ? 'out_hidden_size' : 'hidden_size'), inner,
    act: strField(vision, 'hidden_act', v25 ? 'silu' : 'quick_gelu'),
  };
}

/** How a block's attention is grouped: `windows` groups of `tokens` patches, each attending only itself. */
interface AttentionWindows {
  windows: number;
  tokens: number;
}

/**
 * Qwen2.5-VL's windows over a square merged grid of `grid` tokens a side: get_window_index pads each side up to whole
 * windows, so a side that is not a multiple of the window leaves smaller windows at the edge, which one reshape cannot
 * hold; WAP's assumed image gives whole windows for every released window_size.
 */
function mergedWindows(vision: HfConfig, d: QwenVisionDims, grid: number): AttentionWindows {
  const side = Math.floor(Math.floor(intField(vision, 'window_size') / d.merge) / d.patch);
  if (side < 1) throw new Error(`window_size ${String(vision.window_size)} holds no ${d.merge}×${d.merge} merge of ${d.patch}-pixel patches`);
  const unit = d.merge * d.merge;
  if (side >= grid) return { windows: 1, tokens: grid * grid * unit };
  if (grid % side !== 0) throw new Error(`the ${grid}×${grid} merged tokens of the assumed image do not split into whole ${side}×${side} windows`);
  return { windows: (grid / side) ** 2, tokens: side * side * unit };
}

/** fullatt_block_indexes as a set of block indices (the blocks that attend the whole image). */
function fullAttentionBlocks(vision: HfConfig, depth: number): Set<number> {
  const given = vision.fullatt_block_indexes;
  if (!Array.isArray(given) || !given.every((i) => typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < depth)) {
    throw new Error(`vision_config.fullatt_block_indexes must list block indices below depth ${depth}, got ${JSON.stringify(given)}`);
  }
  return new Set(given as number[]);
}

/**
 * Attention over `w.windows` windows of `w.tokens` patches (one window of every patch for a full-attention block):
 * qkv's three thirds viewed [windows, window patches, heads, head_dim], the rotary products on q and k, transposed to
 * put the heads before the tokens, one sdpa over them, and back to [patches, width].
 */
function windowedAttention(g: HfGraph, prefix: string, qkv: string, d: QwenVisionDims, w: AttentionWindows): string {
  const headDim = d.width / d.heads;
  const heads = (role: string, index: number): string => {
    const part = g.add(`${prefix}.${role}`, 'qkv.unbind', 'split', { axis: -1, chunks: 3, index }, [qkv]);
    const viewed = g.add(`${prefix}.${role}_view`, 'view', 'reshape', { shape: [w.windows, w.tokens, d.heads, headDim] }, [part]);
    const rotated = role === 'v' ? viewed : g.sum(`${prefix}.${role}_rotary`, [g.mul(`${prefix}.${role}_rotary_cos`, [viewed]), g.mul(`${prefix}.${role}_rotary_sin`, [viewed])]);
    return g.add(`${prefix}.${role}_transpose`, 'transpose', 'permute', { dims: [0, 1, 3, 2, 4] }, [rotated]);
  };
  const [q, k, v] = ['q', 'k', 'v'].map(heads);
  const attended = g.add(`${prefix}.sdpa`, 'scaled_dot_product_attention', 'sdpa', { causal: false, heads: d.heads, kvHeads: d.heads, dropout: 0 }, [q, k, v]);
  const back = g.add(`${prefix}.out_transpose`, 'transpose', 'permute', { dims: [0, 1, 3, 2, 4] }, [attended]);
  return g.add(`${prefix}.out_view`, 'reshape', 'reshape', { shape: [-1, d.width] }, [back]);
}

/** The block's MLP: Qwen2.5-VL's gated one with biases, Qwen2-VL's fc1 → act → fc2. */
function blockMlp(g: HfGraph, prefix: string, x: string, d: QwenVisionDims, variant: QwenVisionVariant): string {
  if (variant === 'qwen2_vl') {
    const up = visionActivation(g, `${prefix}.act`, d.act, g.linear(`${prefix}.fc1`, d.width, d.inner, true, x));
    return g.linear(`${prefix}.fc2`, d.inner, d.width, true, up);
  }
  const gate = g.act(`${prefix}.act_fn`, d.act, g.linear(`${prefix}.gate_proj`, d.width, d.inner, true, x));
  const product = g.mul(`${prefix}.mul`, [gate, g.linear(`${prefix}.up_proj`, d.width, d.inner, true, x)]);
  return g.linear(`${prefix}.down_proj`, d.inner, d.width, true, product);
}

/** What the tower hands the language model, and the sizes the tests and the info read. */
export interface QwenImage {
  /** The merger's output, [merged tokens, out]. */
  id: string;
  tokens: number;
  patches: number;
  /** The image's side in pixels. */
  side: number;
  /** Blocks attending within windows, and the windows' count and size (undefined for Qwen2-VL: every block is full). */
  windowed?: { blocks: number; windows: number; patchesEach: number };
  fullBlocks: number;
  dims: QwenVisionDims;
}

/**
 * Builds the tower and merger of `vision` (defaults filled in) under `prefix` on a pixel_values input it adds to `g`:
 * one square image of ASSUMED_IMAGE_TOKENS merged tokens.
 */
export function buildQwenVisionTower(g: HfGraph, vision: HfConfig, variant: QwenVisionVariant, prefix: string): QwenImage {
  const d = qwenVisionDims(vision, variant);
  const mergedSide = Math.round(Math.sqrt(ASSUMED_IMAGE_TOKENS));
  const grid = mergedSide * d.merge;
  const patches = grid * grid;
  const side = grid * d.patch;
  const rowValues = d.channels * d.temporal * d.patch * d.patch;
  const v25 = variant === 'qwen2_5_vl';
  const norm = (name: string, x: string): string => (v25 ? g.norm(name, d.width, 'rmsnorm', x, 'Qwen2RMSNorm') : g.norm(name, d.width, 'layernorm', x));
  const full = v25 ? fullAttentionBlocks(vision, d.depth) : undefined;
  const windows = v25 ? mergedWindows(vision, d, mergedSide) : undefined;
  const whole: AttentionWindows = { windows: 1, tokens: patches };

  const pixels = g.input('pixel_values', [patches, rowValues], 'float');
  let h = g.add(`${prefix}.patch_embed.proj`, 'Conv3d', 'linear', { inFeatures: rowValues, outFeatures: d.width, bias: false }, [pixels]);
  if (windows) h = g.add(`${prefix}.window_index`, 'hidden_states[window_index]', 'reshape', { shape: [-1, d.width] }, [h]);
  for (let i = 0; i < d.depth; i++) {
    const p = `${prefix}.blocks.${i}`;
    const qkv = g.linear(`${p}.attn.qkv`, d.width, 3 * d.width, true, norm(`${p}.norm1`, h));
    const attended = windowedAttention(g, `${p}.attn`, qkv, d, windows && !full?.has(i) ? windows : whole);
    const r1 = g.sum(`${p}.residual_attn`, [h, g.linear(`${p}.attn.proj`, d.width, d.width, true, attended)]);
    h = g.sum(`${p}.residual_mlp`, [r1, blockMlp(g, `${p}.mlp`, norm(`${p}.norm2`, r1), d, variant)]);
  }
  const m = `${prefix}.merger`;
  const mergedWidth = d.width * d.merge * d.merge;
  const grouped = g.add(`${m}.view`, 'view', 'reshape', { shape: [-1, mergedWidth] }, [norm(`${m}.ln_q`, h)]);
  const hidden = g.act(`${m}.mlp.1`, 'gelu', g.linear(`${m}.mlp.0`, mergedWidth, mergedWidth, true, grouped), 'GELU');
  let out = g.linear(`${m}.mlp.2`, mergedWidth, d.out, true, hidden);
  if (windows) out = g.add(`${prefix}.reverse_indices`, 'hidden_states[reverse_indices]', 'reshape', { shape: [-1, d.out] }, [out]);
  const fullBlocks = full ? full.size : d.depth;
  const windowed = windows && full ? { blocks: d.depth - full.size, windows: windows.windows, patchesEach: windows.tokens } : undefined;
  return { id: out, tokens: patches / (d.merge * d.merge), patches, side, fullBlocks, dims: d, ...(windowed ? { windowed } : {}) };
}
