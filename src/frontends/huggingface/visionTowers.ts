/**
 * The vision towers of CLIP and SigLIP as transformers builds them (modeling_clip.py CLIPVisionTransformer,
 * modeling_siglip.py SiglipVisionTransformer), alone (CLIPVisionModel, SiglipVisionModel) or under a
 * vision-language model's `vision_tower` (multimodal.ts):
 *   vision_model.embeddings.{patch_embedding, class_embedding (CLIP), position_embedding}
 *   → vision_model.pre_layrnorm (CLIP)
 *   → vision_model.encoder.layers.N.{layer_norm1, self_attn.{q,k,v,out}_proj, layer_norm2, mlp.{fc1, fc2}}
 *   → vision_model.post_layernorm → vision_model.head (SigLIP's attention pooling, where the config keeps it)
 * What differs between the two:
 * - CLIP's patch Conv2d has no bias (`bias=False`), SigLIP's has one (nn.Conv2d's default);
 * - CLIP prepends a learned class token (an nn.Parameter of hidden_size, torch.cat before the positions), so it has
 *   one position more than patches, and norms the embeddings (pre_layrnorm, transformers' spelling) before layer 0;
 * - CLIP's post_layernorm norms only the pooled class token: its last_hidden_state is the last layer's output as is.
 *   SigLIP's norms every token, and its pooler is a multi-head attention of one learned probe over the tokens
 *   (SiglipMultiheadAttentionPoolingHead: nn.MultiheadAttention, a LayerNorm and the MLP, with a residual), built
 *   unless the config says `vision_use_head: false` (Gemma 3's and PaliGemma's towers do);
 * - the activation: CLIPVisionConfig's default quick_gelu, SiglipVisionConfig's gelu_pytorch_tanh.
 * The position table is an nn.Embedding read at the registered `position_ids` buffer (arange of the positions), so
 * it is an embedding over a constant input here, named as torch names its weight; WAP counts its output once per
 * sample where torch adds one [1, N, hidden] lookup to the whole batch, a transient N·hidden per sample over.
 */
import { boolField, intField, rateField, strField, type HfConfig } from './configs';
import type { BuildContext } from './decoder';
import type { HfGraph } from './graph';

/** The model_types whose towers are built here; their default activation is their config class's `hidden_act`. */
const TOWER_ACTIVATIONS: Readonly<Record<string, string>> = { clip_vision_model: 'quick_gelu', siglip_vision_model: 'gelu_pytorch_tanh' };

export function isVisionTowerType(modelType: string): boolean {
  return Object.prototype.hasOwnProperty.call(TOWER_ACTIVATIONS, modelType);
}

/** What a tower hands on: the tensors transformers' output carries, and its sizes. */
export interface VisionTower {
  /**
   * `hidden_states` as the encoder returns them with output_hidden_states=True: [0] the embeddings layer 0 reads
   * (after CLIP's pre_layrnorm), [i] layer i − 1's output; a vision-language model picks one (LLaVA's
   * vision_feature_layer).
   */
  hiddenStates: string[];
  /** `last_hidden_state`: SigLIP's post_layernorm output, CLIP's last layer output (CLIP norms the class token only). */
  lastHiddenState: string;
  /** `pooler_output`: CLIP's normed class token, SigLIP's attention-pooled probe; undefined without SigLIP's head. */
  pooled?: string;
  /** Tokens per image the encoder runs over: the patches, with CLIP's class token in front. */
  tokens: number;
  /** Whether token 0 is CLIP's class token (LLaVA's 'default' feature strategy drops it). */
  classToken: boolean;
  hidden: number;
  /** patches per side: image_size / patch_size. */
  patchesPerSide: number;
}

/** The image a tower takes, [channels, image_size, image_size] as the config states it. */
export function towerImage(config: HfConfig): number[] {
  const image = intField(config, 'image_size');
  return [intField(config, 'num_channels', 3), image, image];
}

/**
 * transformers' QuickGELUActivation (activations.py), x · sigmoid(1.702 · x): three element-wise kernels in eager
 * PyTorch, a scale, the sigmoid and the product, each priced; the catalogue's other activations are one kernel.
 * Qwen2-VL's tower uses it too (qwenVisionTower.ts).
 */
export function visionActivation(g: HfGraph, name: string, fn: string, x: string): string {
  if (fn !== 'quick_gelu') return g.act(name, fn, x);
  const gate = g.act(`${name}.sigmoid`, 'sigmoid', g.mul(`${name}.scale`, [x]), 'torch.sigmoid');
  return g.add(name, 'QuickGELUActivation', 'mul', {}, [x, gate]);
}

/** An MLP of two Linears with biases around the activation (CLIPMLP, SiglipMLP). */
function mlp(g: HfGraph, prefix: string, hidden: number, inner: number, act: string, x: string): string {
  const up = visionActivation(g, `${prefix}.activation_fn`, act, g.linear(`${prefix}.fc1`, hidden, inner, true, x));
  return g.linear(`${prefix}.fc2`, inner, hidden, true, up);
}

/**
 * Builds the tower of `config` (defaults filled in, model_type one of TOWER_ACTIVATIONS') under `prefix`
 * (`vision_model`, or `vision_tower.vision_model` inside a vision-language model) on `pixels`.
 */
export function buildVisionTower(g: HfGraph, config: HfConfig, prefix: string, pixels: string): VisionTower {
  const type = String(config.model_type);
  if (!isVisionTowerType(type)) throw new Error(`WAP builds clip_vision_model and siglip_vision_model towers, not '${type}'`);
  const clip = type === 'clip_vision_model';
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  const layers = intField(config, 'num_hidden_layers');
  const inner = intField(config, 'intermediate_size');
  const patch = intField(config, 'patch_size');
  const [channels, image] = towerImage(config);
  const act = strField(config, 'hidden_act', TOWER_ACTIVATIONS[type]);
  const attentionDropout = rateField(config, 'attention_dropout');
  if (hidden % heads !== 0) throw new Error(`hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  if (patch < 1 || image < patch) throw new Error(`image_size ${image} holds no patch of patch_size ${patch}`);
  // num_patches = (image_size // patch_size) ** 2: the stride-patch Conv2d drops a remainder (so400m: 384 px, 27 patches of 14).
  const patchesPerSide = Math.floor(image / patch);
  const tokens = patchesPerSide ** 2 + (clip ? 1 : 0);

  const e = `${prefix}.embeddings`;
  const patches = g.add(`${e}.patch_embedding`, 'Conv2d', 'conv', {
    rank: 2, inChannels: channels, outChannels: hidden, kernel: [patch, patch], stride: [patch, patch], padding: [[0, 0], [0, 0]], dilation: [1, 1], groups: 1, bias: !clip,
  }, [pixels]);
  // patch_embeds.flatten(2).transpose(1, 2): [hidden, side, side] → [patches, hidden].
  let h = g.add(`${e}.transpose`, 'transpose', 'permute', { dims: [0, 2, 1] }, [g.add(`${e}.flatten`, 'flatten', 'flatten', { startDim: 2, endDim: -1 }, [patches])]);
  if (clip) {
    // class_embedding.expand(batch, 1, -1) concatenated in front: one token more, hidden_size parameters.
    const cls = g.add(`${e}.class_embedding`, 'nn.Parameter', 'parameter', { shape: [1, hidden] }, []);
    h = g.add(`${e}.cat_class_embedding`, 'torch.cat', 'concat', { axis: 1 }, [cls, h]);
  }
  const positionIds = g.add(`${e}.position_ids`, 'buffer', 'parameter', { shape: [tokens], constant: true }, []);
  h = g.sum(`${e}.add_position_embedding`, [h, g.embedding(`${e}.position_embedding`, tokens, hidden, positionIds)]);
  if (clip) h = g.norm(`${prefix}.pre_layrnorm`, hidden, 'layernorm', h);

  const hiddenStates = [h];
  for (let i = 0; i < layers; i++) {
    const p = `${prefix}.encoder.layers.${i}`;
    const normed = g.norm(`${p}.layer_norm1`, hidden, 'layernorm', h);
    const q = g.linear(`${p}.self_attn.q_proj`, hidden, hidden, true, normed);
    const k = g.linear(`${p}.self_attn.k_proj`, hidden, hidden, true, normed);
    const v = g.linear(`${p}.self_attn.v_proj`, hidden, hidden, true, normed);
    const attended = g.attention(`${p}.self_attn`, q, k, v, { heads, kvHeads: heads, headDim: hidden / heads, causal: false, dropout: attentionDropout });
    const r1 = g.sum(`${p}.residual_attn`, [h, g.linear(`${p}.self_attn.out_proj`, hidden, hidden, true, attended)]);
    h = g.sum(`${p}.residual_mlp`, [r1, mlp(g, `${p}.mlp`, hidden, inner, act, g.norm(`${p}.layer_norm2`, hidden, 'layernorm', r1))]);
    hiddenStates.push(h);
  }
  const shape = { tokens, classToken: clip, hidden, patchesPerSide, hiddenStates };
  if (clip) {
    // pooled_output = post_layernorm(last_hidden_state[:, 0, :]).
    const first = g.add(`${prefix}.class_token`, 'select class token', 'split', { axis: 1, sizes: [1, tokens - 1], index: 0 }, [h]);
    return { ...shape, lastHiddenState: h, pooled: g.norm(`${prefix}.post_layernorm`, hidden, 'layernorm', first) };
  }
  const last = g.norm(`${prefix}.post_layernorm`, hidden, 'layernorm', h);
  // SiglipVisionTransformer: `use_head = True if not hasattr(config, "vision_use_head") else config.vision_use_head`.
  if (!boolField(config, 'vision_use_head', true)) return { ...shape, lastHiddenState: last };
  const head = `${prefix}.head`;
  // probe.repeat(batch, 1, 1): one learned query per sample, attending over every token.
  const probe = g.add(`${head}.probe`, 'nn.Parameter', 'parameter', { shape: [1, 1, hidden], batched: true }, []);
  const pooled = g.add(`${head}.attention`, 'nn.MultiheadAttention', 'mha', { embedDim: hidden, numHeads: heads, bias: true }, [probe, last, last]);
  const out = g.sum(`${head}.residual`, [pooled, mlp(g, `${head}.mlp`, hidden, inner, act, g.norm(`${head}.layernorm`, hidden, 'layernorm', pooled))]);
  // hidden_state[:, 0] of the one pooled token is a view: the [1, hidden] result stands for it.
  return { ...shape, lastHiddenState: last, pooled: out };
}

/**
 * CLIPVisionModel / SiglipVisionModel: the tower under `vision_model` on a pixel_values input; the model's output is
 * its pooler_output where it has one (transformers' BaseModelOutputWithPooling), else last_hidden_state.
 */
export function buildVisionModel(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  if (ctx.head !== 'base') throw new Error(`${String(config.model_type)} has no ${ctx.head} head in WAP's catalogue`);
  const tower = buildVisionTower(g, config, 'vision_model', g.input('pixel_values', towerImage(config), 'float'));
  g.field('last_hidden_state', tower.lastHiddenState);
  return [tower.pooled ? g.field('pooler_output', tower.pooled) : tower.lastHiddenState];
}
