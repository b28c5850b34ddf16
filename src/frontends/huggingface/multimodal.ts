/**
 * Vision-language checkpoints, whose config.json holds the language model's config (nested under `text_config`, or
 * Qwen-VL's own top-level fields) beside a `vision_config`, built whole as transformers 4.46–4.51 builds them (the
 * layout their checkpoints' keys keep). LLaVA and Gemma 3:
 *   vision_tower.vision_model.*   the CLIP or SigLIP tower (visionTowers.ts)
 *   multi_modal_projector.*       the model's projector into the text width
 *   language_model.*              the causal LM of text_config (language_model.model.layers.N…, language_model.lm_head)
 * Qwen2-VL and Qwen2.5-VL (4.49–4.51's Qwen2_5_VLForConditionalGeneration, whose attributes are the checkpoints' keys;
 * transformers ≥ 4.52 names the same modules model.visual.*, model.language_model.* and lm_head):
 *   visual.*                      the tower and its patch merger (qwenVisionTower.ts)
 *   model.* and lm_head           the Qwen2 causal LM of the top-level fields (model.layers.N…), M-RoPE priced as rotary
 * with the loss the composite's own forward takes over the logits. Joined:
 * - gemma3 (Gemma3ForConditionalGeneration, modeling_gemma3.py): SigLIP's last_hidden_state, transposed into its
 *   patch grid, average-pooled to mm_tokens_per_image tokens (Gemma3MultiModalProjector.avg_pool), then
 *   mm_soft_emb_norm (a Gemma RMSNorm) and the matmul with mm_input_projection_weight [vision hidden, text hidden];
 * - llava (LlavaForConditionalGeneration, modeling_llava.py): the tower's hidden_states[vision_feature_layer]
 *   (concatenated along the features when it lists several), the class token dropped under the 'default'
 *   vision_feature_select_strategy, then multi_modal_projector linear_1 → projector_hidden_act → linear_2;
 * - qwen2_vl, qwen2_5_vl (modeling_qwen2_vl.py, modeling_qwen2_5_vl.py): the merger's tokens, already in the text
 *   width, at the image's placeholders.
 * Other vision-language types, and towers other than these, keep the language model alone, said as incomplete.
 * Gemma3ForCausalLM on a Gemma 3 checkpoint is the text model alone in transformers too, and is built so; so is
 * Qwen2_5_VLModel / Qwen2VLModel (AutoModel) in the 4.49–4.51 layout, the decoder under the composite's `model`.
 */
import { diagnosticAt, type Diagnostic, type LayerSpec, type ModelInput } from '../../core/ir';
import { boolField, CONFIG_DEFAULTS, intField, strField, withDefaults, type HfConfig, type HfHead } from './configs';
import { HfGraph } from './graph';
import { ASSUMED_IMAGE_TOKENS, buildQwenVisionTower, type QwenVisionVariant } from './qwenVisionTower';
import type { HfModelRequest, HfModelSpec } from './registry';
import { buildVisionTower, isVisionTowerType, towerImage, type VisionTower } from './visionTowers';

/** A config nested under `key` (`text_config`, `vision_config`), if the field holds one. */
export function nestedConfig(config: HfConfig, key: string): HfConfig | undefined {
  const v = config[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as HfConfig) : undefined;
}

/** What registry.ts lends this file: which model types it builds, and its builder (registry.ts imports this file). */
export interface Catalogue {
  builds(modelType: string): boolean;
  build(req: HfModelRequest): HfModelSpec;
}

/** A projector's output: the image's tokens in the text width, ready to take their place in the sequence. */
interface ImageTokens {
  id: string;
  tokens: number;
  /** How the tower's tokens became these, for the info. */
  how: string;
  notes: string[];
}

/** The image tokens with the tower that made them and the pixel input it read, in words for the info. */
interface EncodedImage extends ImageTokens {
  tower: string;
  /** What pixel_values is assumed to hold. */
  pixels: string;
}

/** How a vision-language model type joins its tower to its language model. */
interface Join {
  /** The text and vision model types its config class assumes when the config names none. */
  text: string;
  tower: string;
  /** Whether the join builds a tower of this vision model_type, and if not, why (for the diagnostic). */
  refusesTower(towerType: string): string | undefined;
  /** The text-only causal-LM class a script may load the checkpoint into (Gemma3ForCausalLM), which builds no tower. */
  textCausalLm?: string;
  /** Whether AutoModelForCausalLM loads the whole model (transformers' causal-LM auto mapping names the ForConditionalGeneration class). */
  autoCausalLmWhole: boolean;
  /** The base class (`…Model`, AutoModel) is the text decoder alone in the layout followed, not the composite. */
  baseIsTextModel?: boolean;
  /** Where the language model's modules sit in the composite: `language_model.` (LLaVA, Gemma 3), '' (Qwen-VL). */
  lmPrefix: string;
  /** The language model's config; absent, the nested text_config. */
  textConfig?(config: HfConfig): HfConfig;
  /** The vision config with its class's defaults filled in, and the tower and projector built on it. */
  visionDefaults(vision: HfConfig, towerType: string): HfConfig;
  encode(g: HfGraph, config: HfConfig, vision: HfConfig, textHidden: number): EncodedImage;
}

const PROJECTOR = 'multi_modal_projector';

/** Gemma3MultiModalProjector.forward: transpose → reshape to the patch grid → AvgPool2d → flatten → transpose → norm → matmul. */
function gemma3Tokens(g: HfGraph, tower: VisionTower, config: HfConfig, textHidden: number): ImageTokens {
  const perImage = intField(config, 'mm_tokens_per_image');
  const side = Math.round(Math.sqrt(perImage));
  const grid = tower.patchesPerSide;
  // tokens_per_side = int(mm_tokens_per_image ** 0.5), kernel_size = patches_per_image // tokens_per_side: any other
  // count leaves the pooled tokens and the image-token positions unequal, which transformers rejects at the merge.
  if (side * side !== perImage || grid % side !== 0) throw new Error(`mm_tokens_per_image ${perImage} is not a square that the ${grid}×${grid} patch grid pools to evenly`);
  const kernel = grid / side;
  const { hidden } = tower;
  const channels = g.add(`${PROJECTOR}.transpose`, 'transpose', 'permute', { dims: [0, 2, 1] }, [tower.lastHiddenState]);
  const patches = g.add(`${PROJECTOR}.reshape`, 'reshape', 'reshape', { shape: [hidden, grid, grid] }, [channels]);
  const pooled = g.add(`${PROJECTOR}.avg_pool`, 'AvgPool2d', 'pool', { rank: 2, mode: 'avg', kernel: [kernel, kernel], stride: [kernel, kernel] }, [patches]);
  const flat = g.add(`${PROJECTOR}.flatten`, 'flatten', 'flatten', { startDim: 2, endDim: -1 }, [pooled]);
  const tokens = g.add(`${PROJECTOR}.transpose_back`, 'transpose', 'permute', { dims: [0, 2, 1] }, [flat]);
  const normed = g.norm(`${PROJECTOR}.mm_soft_emb_norm`, hidden, 'rmsnorm', tokens, 'Gemma3RMSNorm');
  // torch.matmul with an nn.Parameter [vision hidden, text hidden]: a bias-free Linear's GEMMs and weight, the weight
  // stored transposed; priced as one, whose saved input is the activation alone (the weight is not per sample).
  const projected = g.add(`${PROJECTOR}.mm_input_projection_weight`, 'torch.matmul (mm_input_projection_weight)', 'linear', { inFeatures: hidden, outFeatures: textHidden, bias: false }, [normed]);
  return { id: projected, tokens: perImage, how: `its ${grid * grid} patches average-pooled ${kernel}×${kernel} to ${perImage} tokens (mm_tokens_per_image)`, notes: [] };
}

/** LlavaModel.get_image_features and LlavaMultiModalProjector. */
function llavaTokens(g: HfGraph, tower: VisionTower, config: HfConfig, textHidden: number): ImageTokens {
  const states = tower.hiddenStates.length;
  const given = config.vision_feature_layer;
  const layers = Array.isArray(given) ? given : [given];
  const picked = layers.map((layer) => {
    if (typeof layer !== 'number' || !Number.isInteger(layer) || layer < -states || layer >= states) throw new Error(`vision_feature_layer ${JSON.stringify(given)} is not an index into the tower's ${states} hidden states`);
    return layer < 0 ? states + layer : layer;
  });
  let features = picked.length === 1 ? tower.hiddenStates[picked[0]] : g.add('image_features.cat', 'torch.cat', 'concat', { axis: -1 }, picked.map((i) => tower.hiddenStates[i]));
  const strategy = strField(config, 'vision_feature_select_strategy', 'default');
  if (strategy !== 'default' && strategy !== 'full') throw new Error(`vision_feature_select_strategy must be 'default' or 'full', got '${strategy}'`);
  let tokens = tower.tokens;
  // 'default' is selected_image_feature[:, 1:]: CLIP's class token dropped (the first token, whatever the tower).
  if (strategy === 'default') {
    features = g.add('image_features.drop_first_token', 'selected_image_feature[:, 1:]', 'split', { axis: 1, sizes: [1, tokens - 1], index: 1 }, [features]);
    tokens -= 1;
  }
  // linear_1 takes vision hidden × the number of layers read; both Linears carry multimodal_projector_bias.
  const bias = boolField(config, 'multimodal_projector_bias', true);
  const first = g.linear(`${PROJECTOR}.linear_1`, tower.hidden * picked.length, textHidden, bias, features);
  const projected = g.linear(`${PROJECTOR}.linear_2`, textHidden, textHidden, bias, g.act(`${PROJECTOR}.act`, strField(config, 'projector_hidden_act', 'gelu'), first));
  const read = `hidden_states[${picked.join(', ')}] of ${states}`;
  // Layers past the last one read still run (output_hidden_states runs the whole encoder), but reach no loss.
  const unread = states - 1 - Math.max(...picked);
  const last = unread === 1 ? 'last layer' : `last ${unread} layers`;
  const notes = unread > 0 ? [`vision_feature_layer ${JSON.stringify(given)} reads ${read}: transformers still builds and runs the tower's ${last} (and its post_layernorm), whose output reaches no loss; torch counts their weights, as WAP does, and WAP also prices their backward and optimizer state, which autograd and AdamW skip for parameters without gradients`] : [];
  return { id: projected, tokens, how: `${read}${strategy === 'default' ? ', its first (class) token dropped' : ''}, through linear_1 → ${strField(config, 'projector_hidden_act', 'gelu')} → linear_2`, notes };
}

/** LLaVA's and Gemma 3's joins: a CLIP or SigLIP tower under vision_tower.vision_model, then the model's projector. */
function towerJoin(join: Pick<Join, 'text' | 'tower' | 'textCausalLm' | 'autoCausalLmWhole'>, project: (g: HfGraph, tower: VisionTower, config: HfConfig, textHidden: number) => ImageTokens): Join {
  return {
    ...join,
    lmPrefix: 'language_model.',
    refusesTower: (type) => (isVisionTowerType(type) ? undefined : `WAP builds clip_vision_model and siglip_vision_model towers, not ${type}`),
    visionDefaults: (vision, type) => withDefaults(type, vision),
    encode: (g, config, vision, textHidden) => {
      const image = towerImage(vision);
      const tower = buildVisionTower(g, vision, 'vision_tower.vision_model', g.input('pixel_values', image, 'float'));
      const size = `${image[1]}×${image[2]}`;
      return { ...project(g, tower, config, textHidden), tower: `its ${String(vision.model_type)} tower (${tower.hiddenStates.length - 1} layers, ${tower.tokens} tokens an image at ${size})`, pixels: `one image a sample, at vision_config's image_size (${size})` };
    },
  };
}

/**
 * Qwen2-VL's and Qwen2.5-VL's join. The released config.json keeps the language model's fields at the top level
 * (4.49–4.51's Qwen2_5_VLConfig is one flat config; later saves may nest them as text_config, model_type
 * 'qwen2_5_vl_text'): either way its text model is Qwen2's decoder (q/k/v with biases, o_proj without), built as qwen2
 * over the config class's text defaults. M-RoPE (rope_scaling.mrope_section) rotates the same query and key elements
 * as rotary does, with cos and sin taken section by section from the temporal, height and width positions: priced as
 * rotary. The merger already projects to the text width, so its tokens go into the sequence as they are.
 */
function qwenJoin(variant: QwenVisionVariant): Join {
  return {
    text: 'qwen2',
    tower: variant,
    // Qwen2_5_VLVisionConfig and Qwen2VLVisionConfig carry the composite's own model_type.
    refusesTower: (type) => (type === variant ? undefined : `a ${variant} model builds its own ${variant} tower, not ${type}`),
    autoCausalLmWhole: false,
    baseIsTextModel: true,
    lmPrefix: '',
    textConfig: (config) => {
      const { vision_config: _vision, text_config: _text, ...own } = config;
      return { ...own, ...(nestedConfig(config, 'text_config') ?? {}), model_type: 'qwen2' };
    },
    visionDefaults: (vision) => ({ ...nestedConfig(CONFIG_DEFAULTS[variant], 'vision_config'), ...vision, model_type: variant }),
    encode: (g, _config, vision, textHidden) => {
      const image = buildQwenVisionTower(g, vision, variant, 'visual');
      const d = image.dims;
      if (d.out !== textHidden) throw new Error(`its merger projects to ${d.out}, not the language model's hidden_size ${textHidden}`);
      const blocks = image.windowed
        ? `${image.windowed.blocks} attending within ${image.windowed.windows} windows of ${image.windowed.patchesEach} patches, ${image.fullBlocks} over all ${image.patches}`
        : `each over all ${image.patches} patches`;
      const notes = image.windowed
        ? [`visual's ${image.windowed.blocks} windowed blocks are priced as attention within each window (${image.windowed.windows} windows × ${image.windowed.patchesEach}² scores a head), as flash_attention_2 and current transformers' eager and sdpa paths run them; transformers 4.50's eager and sdpa vision attention computed all ${image.patches}² scores under a block mask`]
        : [];
      const size = `${image.side}×${image.side}`;
      return {
        id: image.id,
        tokens: image.tokens,
        how: `its ${image.patches} patches merged ${d.merge}×${d.merge} by visual.merger (ln_q → mlp.0 → GELU → mlp.2) into ${image.tokens} tokens of ${d.out}`,
        notes,
        tower: `its ${variant} vision tower (${d.depth} blocks of ${d.width}: ${blocks}; ${image.patches} patches of ${d.patch} px an image at ${size})`,
        pixels: `one ${size} image a sample (${ASSUMED_IMAGE_TOKENS} merged tokens, the low end of the 256–1280 visual tokens Qwen's model card suggests), as the processor hands it: ${image.patches} patch rows of ${d.channels}·${d.temporal}·${d.patch}² values`,
      };
    },
  };
}

/**
 * The joins, with their config classes' defaults for the nested model types (Gemma3Config: Gemma3TextConfig and
 * SiglipVisionConfig; LlavaConfig: 'llama' and 'clip_vision_model'; Qwen's in configs.ts). transformers' current
 * MODEL_FOR_CAUSAL_LM_MAPPING maps gemma3 to Gemma3ForConditionalGeneration, so AutoModelForCausalLM on a Gemma 3
 * checkpoint loads the whole model; releases that mapped it to Gemma3ForCausalLM loaded the text model alone, as
 * Gemma3ForCausalLM.from_pretrained still does (its config class is the text_config's, which auto_factory hands it).
 * The mapping has no llava, qwen2_vl or qwen2_5_vl entry (their auto classes are AutoModelForImageTextToText and
 * AutoModelForVision2Seq).
 */
const JOINS: Readonly<Record<string, Join>> = {
  gemma3: towerJoin({ text: 'gemma3_text', tower: 'siglip_vision_model', textCausalLm: 'Gemma3ForCausalLM', autoCausalLmWhole: true }, gemma3Tokens),
  llava: towerJoin({ text: 'llama', tower: 'clip_vision_model', autoCausalLmWhole: false }, llavaTokens),
  qwen2_vl: qwenJoin('qwen2_vl'),
  qwen2_5_vl: qwenJoin('qwen2_5_vl'),
};

/** The language model's layers renamed under the join's prefix, with the image tokens merged in (see mergeImageTokens). */
interface Merged {
  layers: LayerSpec[];
  outputs: string[];
  fields: Map<string, string>;
}

/** The loss nodes the composite's forward adds after the logits (walked back from the loss to the logits). */
function compositeLoss(lm: HfModelSpec): Set<string> {
  const own = new Set<string>();
  const loss = lm.outputFields?.get('loss');
  const logits = lm.outputFields?.get('logits');
  const byId = new Map(lm.layers.map((l) => [l.id, l]));
  for (const stack = loss ? [loss] : []; stack.length > 0; ) {
    const id = stack.pop()!;
    const layer = byId.get(id);
    if (id === logits || own.has(id) || !layer) continue;
    own.add(id);
    stack.push(...layer.inputs);
  }
  return own;
}

/**
 * The image's tokens take their place in the language model's sequence. transformers embeds input_ids, where the
 * processor wrote one placeholder per image token, and masked_scatter puts the image tokens at the placeholders:
 * the sequence keeps its length. WAP's token inputs are length-free (a --seq-len or the run's length sets them),
 * and a view can take no fixed count out of a free length, so the merge is a concat along the token axis of the
 * image tokens and the text's own tokens: input_ids holds the text's tokens, and the language model runs those plus
 * the image's. The image goes in front, where chat templates put it; for the cost the place does not matter.
 * The embeddings merged into are those the decoder layers read: after Gemma's √hidden scale (embed_scale), which
 * Gemma 3 applies to the text alone before the merge. The language model's modules take the composite's `prefix`
 * (`language_model.` for LLaVA and Gemma 3; Qwen-VL's sit at the top, named as its causal LM names them).
 */
function mergeImageTokens(lm: HfModelSpec, lmHead: HfHead, image: ImageTokens, prefix: string, range: HfModelRequest['range']): Merged {
  const base = lmHead === 'base' ? '' : 'model.';
  const ids = new Set(lm.layers.map((l) => l.id));
  const embedded = [`${base}embed_scale`, `${base}embed_tokens`].find((id) => ids.has(id));
  if (!embedded) throw new Error(`the language model has no ${base}embed_tokens for the image tokens to join`);
  const own = compositeLoss(lm);
  const rename = (id: string): string => (ids.has(id) && !own.has(id) ? `${prefix}${id}` : id);
  const merge = 'merge_image_features';
  const layers: LayerSpec[] = [];
  for (const l of lm.layers) {
    const inputs = l.inputs.map((i) => (i === embedded ? merge : rename(i)));
    const name = own.has(l.id) ? l.name : `${prefix}${l.name}`;
    layers.push({ ...l, id: rename(l.id), name, inputs, ...(l.weightKey !== undefined ? { weightKey: `${prefix}${l.weightKey}` } : {}) });
    if (l.id === embedded) {
      layers.push({ id: merge, name: merge, type: 'Tensor.masked_scatter (image tokens at their placeholders)', op: 'concat', attrs: { axis: 1 }, inputs: [image.id, rename(embedded)], range });
    }
  }
  const fields = new Map([...(lm.outputFields ?? new Map<string, string>())].map(([field, id]) => [field, rename(id)]));
  fields.set('image_hidden_states', image.id);
  return { layers, outputs: lm.outputs.map(rename), fields };
}

/** The language model alone, with the vision tower said as left out (the run holds its weights) and the result incomplete. */
function withoutTower(lm: HfModelSpec, req: HfModelRequest, textType: string, vision: HfConfig, why: string): HfModelSpec {
  const visionType = typeof vision.model_type === 'string' ? vision.model_type : 'a vision encoder';
  // CLIP and SigLIP count num_hidden_layers, Qwen's towers depth.
  const layers = vision.num_hidden_layers ?? vision.depth;
  const depth = typeof layers === 'number' ? `, ${layers} layers` : '';
  const message = `${req.className} (${req.source}) is a vision-language model: WAP builds its language model (text_config, model_type '${textType}') and not its vision tower (${visionType}${depth}) or the projector, whose weights the run holds too (${why}); the plan is the language model's, as a text-only fine-tune runs it, and leaves their memory out`;
  const note: Diagnostic = { ...diagnosticAt('warning', 'hf-vision-tower', message, req.range), incomplete: true, carriesToPlan: true };
  return { ...lm, diagnostics: [...lm.diagnostics, note] };
}

/**
 * CLIPVisionModel / SiglipVisionModel loaded from a CLIP or SigLIP checkpoint (openai/clip-vit-large-patch14-336's
 * config.json is a CLIPConfig): CLIPVisionConfig.from_pretrained reads the file's vision_config, as
 * SiglipVisionConfig's does (`if config_dict.get("model_type") == "siglip": config_dict = config_dict["vision_config"]`).
 */
function towerOfDualEncoder(req: HfModelRequest): HfModelRequest | undefined {
  const type = req.config.model_type;
  const vision = nestedConfig(req.config, 'vision_config');
  if (typeof type !== 'string' || !isVisionTowerType(type) || !vision) return undefined;
  return { ...req, config: { ...vision, model_type: type }, source: `${req.source}'s vision_config` };
}

/**
 * The model a config that nests others describes, or undefined when it nests none WAP reads (registry.ts then
 * builds it as a single model). Never throws: a tower or projector that cannot be built leaves the language model,
 * said as incomplete with why.
 */
export function buildComposedModel(req: HfModelRequest, catalogue: Catalogue): HfModelSpec | undefined {
  const tower = towerOfDualEncoder(req);
  if (tower) return catalogue.build(tower);
  const compositeType = typeof req.config.model_type === 'string' ? req.config.model_type : '';
  const join = Object.prototype.hasOwnProperty.call(JOINS, compositeType) ? JOINS[compositeType] : undefined;
  const config = join ? withDefaults(compositeType, req.config) : req.config;
  const text = join?.textConfig ? join.textConfig(config) : nestedConfig(config, 'text_config');
  const textType = typeof text?.model_type === 'string' ? text.model_type : join?.text;
  if (!text || !textType || !catalogue.builds(textType)) return undefined;
  // ForConditionalGeneration is an encoder-decoder's head elsewhere; here it is the decoder's causal LM, as is the
  // whole model AutoModelForCausalLM loads where the auto mapping names that class.
  const autoWhole = join?.autoCausalLmWhole === true && req.head === 'causal-lm' && req.className === 'AutoModelForCausalLM';
  const head: HfHead = autoWhole ? 'seq2seq-lm' : req.head;
  const lmHead: HfHead = head === 'seq2seq-lm' ? 'causal-lm' : head;
  const lm = catalogue.build({ ...req, config: { ...text, model_type: textType }, head: lmHead });
  const vision = nestedConfig(config, 'vision_config') ?? {};
  if (join?.textCausalLm !== undefined && req.className === join.textCausalLm) {
    const message = `${req.className} (${req.source}) on a ${compositeType} checkpoint is its text model alone, as transformers loads it (its config class is the text_config's, which auto_factory hands it): no vision tower or projector is built or loaded; the ForConditionalGeneration class, AutoModelForImageTextToText or AutoModelForCausalLM trains them`;
    return { ...lm, diagnostics: [...lm.diagnostics, diagnosticAt('info', 'hf-text-model', message, req.range)] };
  }
  if (join?.baseIsTextModel && head === 'base') {
    const message = `${req.className} (${req.source}) is the text decoder alone in the layout WAP follows (transformers 4.49–4.51, where ${compositeType}'s ForConditionalGeneration holds it as \`model\` beside \`visual\`): no vision tower or merger is built; transformers ≥ 4.52's base model holds both (load the ForConditionalGeneration class or AutoModelForImageTextToText to train the whole model)`;
    return { ...lm, diagnostics: [...lm.diagnostics, diagnosticAt('info', 'hf-text-model', message, req.range)] };
  }
  if (!join) return withoutTower(lm, req, textType, vision, `WAP joins towers to language models for ${Object.keys(JOINS).join(' and ')}, not ${compositeType || 'a config without model_type'}`);
  const towerType = typeof vision.model_type === 'string' ? vision.model_type : join.tower;
  const refused = join.refusesTower(towerType);
  if (refused) return withoutTower(lm, req, textType, vision, refused);
  if (head !== 'seq2seq-lm' && head !== 'base') return withoutTower(lm, req, textType, vision, `WAP builds the whole model for ForConditionalGeneration, AutoModelForImageTextToText and the base model, not for ${req.className}`);
  if (lm.layers.length === 1 && lm.layers[0].op === 'opaque') return lm;
  try {
    const whole = wholeModel(req, join, config, lm, lmHead, withDefaults(textType, text), join.visionDefaults(vision, towerType));
    if (!autoWhole) return whole;
    const note = `AutoModelForCausalLM loads ${compositeType}'s whole vision-language model, as transformers' current causal-LM auto mapping names its ForConditionalGeneration class; releases that mapped it to ${join.textCausalLm ?? 'the text model'} loaded the language model alone (load ${join.textCausalLm ?? 'that class'} to train it so)`;
    return { ...whole, diagnostics: [...whole.diagnostics, diagnosticAt('info', 'hf-auto-class', note, req.range)] };
  } catch (e) {
    return withoutTower(lm, req, textType, vision, `its ${towerType} tower or projector cannot be built from this config: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The tower, projector and language model as one graph; throws what the tower or projector cannot be built from. */
function wholeModel(req: HfModelRequest, join: Join, config: HfConfig, lm: HfModelSpec, lmHead: HfHead, text: HfConfig, vision: HfConfig): HfModelSpec {
  const g = new HfGraph(req.range);
  const imageTokens = join.encode(g, config, vision, intField(text, 'hidden_size'));
  const merged = mergeImageTokens(lm, lmHead, imageTokens, join.lmPrefix, req.range);
  const tokenInput = lm.inputs.find((i) => i.dtype === 'int');
  const length = tokenInput?.shape?.[0];
  if (!tokenInput || length === undefined) throw new Error('the language model has no token input');
  if (length <= imageTokens.tokens) throw new Error(`its ${length} positions leave no text after the image's ${imageTokens.tokens} tokens`);
  const textTokens = length - imageTokens.tokens;
  const textInput: ModelInput = {
    ...tokenInput,
    shape: [textTokens],
    ...(tokenInput.assumed ? { assumed: `${tokenInput.assumed}, less the ${imageTokens.tokens} tokens of its image` } : {}),
    ...(tokenInput.maxLength ? { maxLength: { tokens: textTokens, what: `${req.className} leaves to text after its ${imageTokens.tokens} image tokens (${req.source})` } } : {}),
  };
  const pixels: ModelInput[] = g.inputs.map((i) => ({ ...i, assumed: imageTokens.pixels }));
  const info = `${req.className} built whole: ${imageTokens.tower}, ${imageTokens.how}, merged into the language model's sequence. input_ids count the text's tokens: each sample's ${imageTokens.tokens} image tokens come on top of them (one image a sample), so a --seq-len T runs the language model over T + ${imageTokens.tokens} tokens`;
  const notes = [info, ...imageTokens.notes].map((m) => diagnosticAt('info', 'hf-vision-language', m, req.range));
  return {
    ...lm,
    inputs: [textInput, ...pixels],
    layers: [...g.layers, ...merged.layers],
    outputs: merged.outputs,
    outputFields: merged.fields,
    diagnostics: [...lm.diagnostics, ...g.diagnostics, ...notes],
  };
}
