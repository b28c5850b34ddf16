/**
 * Vision-language checkpoints, whose config.json nests the language model's config under `text_config` beside a
 * `vision_config`, built whole as transformers 4.46–4.51 builds them (the layout their checkpoints' keys keep):
 *   vision_tower.vision_model.*   the CLIP or SigLIP tower (visionTowers.ts)
 *   multi_modal_projector.*       the model's projector into the text width
 *   language_model.*              the causal LM of text_config (language_model.model.layers.N…, language_model.lm_head)
 * with the loss the composite's own forward takes over the logits. Joined:
 * - gemma3 (Gemma3ForConditionalGeneration, modeling_gemma3.py): SigLIP's last_hidden_state, transposed into its
 *   patch grid, average-pooled to mm_tokens_per_image tokens (Gemma3MultiModalProjector.avg_pool), then
 *   mm_soft_emb_norm (a Gemma RMSNorm) and the matmul with mm_input_projection_weight [vision hidden, text hidden];
 * - llava (LlavaForConditionalGeneration, modeling_llava.py): the tower's hidden_states[vision_feature_layer]
 *   (concatenated along the features when it lists several), the class token dropped under the 'default'
 *   vision_feature_select_strategy, then multi_modal_projector linear_1 → projector_hidden_act → linear_2.
 * Other vision-language types, and towers other than CLIP's and SigLIP's, keep the language model alone, said as
 * incomplete. Gemma3ForCausalLM on a Gemma 3 checkpoint is the text model alone in transformers too, and is built so.
 */
import { diagnosticAt, type Diagnostic, type LayerSpec, type ModelInput } from '../../core/ir';
import { boolField, intField, strField, withDefaults, type HfConfig, type HfHead } from './configs';
import { HfGraph } from './graph';
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

/** How a vision-language model type joins its tower to its language model. */
interface Join {
  /** The text and vision model types its config class assumes when the nested config names none. */
  text: string;
  tower: string;
  /** The text-only causal-LM class a script may load the checkpoint into (Gemma3ForCausalLM), which builds no tower. */
  textCausalLm?: string;
  /** Whether AutoModelForCausalLM loads the whole model (transformers' causal-LM auto mapping names the ForConditionalGeneration class). */
  autoCausalLmWhole: boolean;
  project(g: HfGraph, tower: VisionTower, config: HfConfig, textHidden: number): ImageTokens;
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

/**
 * The joins, with their config classes' defaults for the nested model types (Gemma3Config: Gemma3TextConfig and
 * SiglipVisionConfig; LlavaConfig: 'llama' and 'clip_vision_model'). transformers' current MODEL_FOR_CAUSAL_LM_MAPPING
 * maps gemma3 to Gemma3ForConditionalGeneration, so AutoModelForCausalLM on a Gemma 3 checkpoint loads the whole
 * model; releases that mapped it to Gemma3ForCausalLM loaded the text model alone, as Gemma3ForCausalLM.from_pretrained
 * still does (its config class is the text_config's, which auto_factory hands it). The mapping has no llava entry.
 */
const JOINS: Readonly<Record<string, Join>> = {
  gemma3: { text: 'gemma3_text', tower: 'siglip_vision_model', textCausalLm: 'Gemma3ForCausalLM', autoCausalLmWhole: true, project: gemma3Tokens },
  llava: { text: 'llama', tower: 'clip_vision_model', autoCausalLmWhole: false, project: llavaTokens },
};

/** The language model's layers renamed under `language_model.`, with the image tokens merged in (see mergeImageTokens). */
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
 * Gemma 3 applies to the text alone before the merge.
 */
function mergeImageTokens(lm: HfModelSpec, lmHead: HfHead, image: ImageTokens, range: HfModelRequest['range']): Merged {
  const base = lmHead === 'base' ? '' : 'model.';
  const ids = new Set(lm.layers.map((l) => l.id));
  const embedded = [`${base}embed_scale`, `${base}embed_tokens`].find((id) => ids.has(id));
  if (!embedded) throw new Error(`the language model has no ${base}embed_tokens for the image tokens to join`);
  const own = compositeLoss(lm);
  const rename = (id: string): string => (ids.has(id) && !own.has(id) ? `language_model.${id}` : id);
  const merge = 'merge_image_features';
  const layers: LayerSpec[] = [];
  for (const l of lm.layers) {
    const inputs = l.inputs.map((i) => (i === embedded ? merge : rename(i)));
    const name = own.has(l.id) ? l.name : `language_model.${l.name}`;
    layers.push({ ...l, id: rename(l.id), name, inputs, ...(l.weightKey !== undefined ? { weightKey: `language_model.${l.weightKey}` } : {}) });
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
  const depth = typeof vision.num_hidden_layers === 'number' ? `, ${intField(vision, 'num_hidden_layers')} layers` : '';
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
  const text = nestedConfig(config, 'text_config');
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
  if (!join) return withoutTower(lm, req, textType, vision, `WAP joins towers to language models for ${Object.keys(JOINS).join(' and ')}, not ${compositeType || 'a config without model_type'}`);
  const towerType = typeof vision.model_type === 'string' ? vision.model_type : join.tower;
  if (!isVisionTowerType(towerType)) return withoutTower(lm, req, textType, vision, `WAP builds clip_vision_model and siglip_vision_model towers, not ${towerType}`);
  if (head !== 'seq2seq-lm' && head !== 'base') return withoutTower(lm, req, textType, vision, `WAP builds the whole model for ForConditionalGeneration, AutoModelForImageTextToText and the base model, not for ${req.className}`);
  if (lm.layers.length === 1 && lm.layers[0].op === 'opaque') return lm;
  try {
    const whole = wholeModel(req, join, config, lm, lmHead, withDefaults(textType, text), withDefaults(towerType, vision));
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
  const image = towerImage(vision);
  const tower = buildVisionTower(g, vision, 'vision_tower.vision_model', g.input('pixel_values', image, 'float'));
  const imageTokens = join.project(g, tower, config, intField(text, 'hidden_size'));
  const merged = mergeImageTokens(lm, lmHead, imageTokens, req.range);
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
  const pixels: ModelInput[] = g.inputs.map((i) => ({ ...i, assumed: `one image a sample, at vision_config's image_size (${image[1]}×${image[2]})` }));
  const towerType = String(vision.model_type);
  const info = `${req.className} built whole: its ${towerType} tower (${tower.hiddenStates.length - 1} layers, ${tower.tokens} tokens an image at ${image[1]}×${image[2]}), ${imageTokens.how}, merged into the language model's sequence. input_ids count the text's tokens: each sample's ${imageTokens.tokens} image tokens come on top of them (one image a sample), so a --seq-len T runs the language model over T + ${imageTokens.tokens} tokens`;
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
