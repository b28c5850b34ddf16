/**
 * Where each catalogued architecture keeps the modules a fine-tuning script reaches by method rather than by name:
 * `model.base_model` (the class's base_model_prefix attribute), `get_input_embeddings()`, `get_output_embeddings()`
 * and an encoder–decoder's `get_encoder()` / `get_decoder()`. One entry per model_type, beside the builders that name
 * the same modules, so a new architecture states them once (the Python frontend's transformersModules.ts and
 * transformersEmbeddings.ts read them). Paths are transformers' own (the modeling files' attributes), and the Python
 * frontend resolves one only where the built graph holds parameters under it.
 */

export interface HfModuleLayout {
  /** base_model_prefix: `model.base_model` is this attribute when the model has it ('' when the model is its own base). */
  base: string;
  /** get_input_embeddings(), relative to the base model. */
  inputEmbeddings?: string;
  /** get_output_embeddings() of the LM-head classes, from the model. */
  outputEmbeddings?: string;
  /** An encoder–decoder's stacks, relative to the base model; each stack's own get_input_embeddings() is its embed_tokens. */
  stacks?: readonly ['encoder', 'decoder'];
  /** The model has freeze_encoder() (Whisper's), which stops gradients to every encoder parameter. */
  freezesEncoder?: boolean;
  /** How a newer transformers names the parameters the graph holds under 4.46–4.51's names (newerNames.ts reads it). */
  newer?: NewerNames;
}

/**
 * A newer transformers' names for a model's parameters, where they are not the ones the graph keeps (transformers
 * 4.46–4.51's, the checkpoints' keys). A script written for either release reaches the same parameters through them
 * (the Python frontend's transformersModules.ts; ../freezing/stepNaming.ts decides which names a freeze loop reads).
 */
export interface NewerNames {
  /** The release that renamed them, for messages ('4.52', '5'). */
  since: string;
  /**
   * Module paths the newer ForConditionalGeneration classes hold elsewhere, newer path → graph path, matched from the
   * model's root (their base models keep the graph's names).
   */
  moves?: Readonly<Record<string, string>>;
  /** Attributes of the model the newer classes keep as properties for older code: attribute → the newer path it returns. */
  properties?: Readonly<Record<string, string>>;
  /** A module renamed wherever it occurs, graph name → newer name (Mixtral's `block_sparse_moe`, transformers 5's `mlp`). */
  renamedModules?: Readonly<Record<string, string>>;
  /**
   * Experts held as one 3-D tensor per projection: the newer parameter of the experts module → the parameters of each
   * expert (relative to `experts.<e>`) it stacks. Every parameter of every expert must be named by one.
   */
  fusedExperts?: Readonly<Record<string, readonly string[]>>;
  /** No release names the parameters as the graph does (GPT-OSS's experts were fused from its first release). */
  graphNamesUnreleased?: boolean;
}

const DECODER_LM: HfModuleLayout = { base: 'model', inputEmbeddings: 'embed_tokens', outputEmbeddings: 'lm_head' };
const BERT_LIKE = (base: string, outputEmbeddings: string): HfModuleLayout => ({ base, inputEmbeddings: 'embeddings.word_embeddings', outputEmbeddings });
const ENCODER_DECODER = ['encoder', 'decoder'] as const;
/**
 * LLaVA and Gemma 3 (modeling_llava.py, modeling_gemma3.py). In transformers 4.46–4.51 (the layout multimodal.ts
 * builds) the language model is an attribute of the model, which is its own base model, and its embeddings and head
 * are the language model's. From 4.52 the ForConditionalGeneration class holds `model` (LlavaModel, Gemma3Model:
 * vision_tower, multi_modal_projector and language_model, the bare decoder) beside `lm_head`; its
 * `_checkpoint_conversion_mapping` renames the checkpoints' keys so: `^language_model.model` → `model.language_model`,
 * `^vision_tower` → `model.vision_tower`, `^multi_modal_projector` → `model.multi_modal_projector`,
 * `^language_model.lm_head` → `lm_head`. It keeps `language_model`, `vision_tower` and `multi_modal_projector` as
 * properties returning `self.model.<name>` ("Make modules available through conditional class for BC"; read in
 * huggingface/transformers' modeling_llava.py and modeling_gemma3.py of the 4.52 line): there `language_model` is the
 * bare decoder, where the older class's was the causal LM with its lm_head.
 */
const VISION_LANGUAGE: HfModuleLayout = {
  base: '',
  inputEmbeddings: 'language_model.model.embed_tokens',
  outputEmbeddings: 'language_model.lm_head',
  newer: {
    since: '4.52',
    moves: { 'model.language_model': 'language_model.model', 'model.vision_tower': 'vision_tower', 'model.multi_modal_projector': 'multi_modal_projector', lm_head: 'language_model.lm_head' },
    properties: { language_model: 'model.language_model', vision_tower: 'model.vision_tower', multi_modal_projector: 'model.multi_modal_projector' },
  },
};

/**
 * Qwen-VL: transformers ≥ 4.52's model.visual and model.language_model are the graph's visual and model (its
 * `_checkpoint_conversion_mapping`), with `visual` and `language_model` kept as properties on the 4.x line (transformers
 * 5 dropped `visual`'s, tenstorrent/tt-metal#48206); a path either release names is read.
 */
const QWEN_VL: HfModuleLayout = {
  ...DECODER_LM,
  newer: { since: '4.52', moves: { 'model.visual': 'visual', 'model.language_model': 'model' }, properties: { visual: 'model.visual', language_model: 'model.language_model' } },
};

/**
 * Mixture-of-experts decoders in transformers 5, whose experts are one module holding a 3-D tensor per projection:
 * huggingface/transformers' conversion_mapping.py converts the checkpoints' `mlp.experts.*.gate_proj.weight` and
 * `up_proj.weight` into `mlp.experts.gate_up_proj` ([experts, 2·intermediate, hidden], gate then up) and
 * `mlp.experts.*.down_proj.weight` into `mlp.experts.down_proj` for qwen2_moe, and the same for qwen3_moe, deepseek_v2
 * and deepseek_v3; Mixtral's `block_sparse_moe.experts.*.w1`/`w3` become `mlp.experts.gate_up_proj`, `w2`
 * `mlp.experts.down_proj`, and its `.block_sparse_moe.gate` `.mlp.gate`. Shared experts stay gated MLPs.
 */
const FUSED_GATED_EXPERTS = { gate_up_proj: ['gate_proj.weight', 'up_proj.weight'], down_proj: ['down_proj.weight'] } as const;
const MOE_DECODER: HfModuleLayout = { ...DECODER_LM, newer: { since: '5', fusedExperts: FUSED_GATED_EXPERTS } };
const MIXTRAL: HfModuleLayout = {
  ...DECODER_LM,
  newer: { since: '5', renamedModules: { block_sparse_moe: 'mlp' }, fusedExperts: { gate_up_proj: ['w1.weight', 'w3.weight'], down_proj: ['w2.weight'] } },
};
/**
 * GPT-OSS (modeling_gpt_oss.py, from 4.55): GptOssExperts holds gate_up_proj, gate_up_proj_bias, down_proj and
 * down_proj_bias, one tensor each over the experts, in every release; the graph's per-expert layers are WAP's own.
 */
const GPT_OSS: HfModuleLayout = {
  ...DECODER_LM,
  newer: {
    since: '4.55',
    graphNamesUnreleased: true,
    fusedExperts: { gate_up_proj: ['gate_up_proj.weight'], gate_up_proj_bias: ['gate_up_proj.bias'], down_proj: ['down_proj.weight'], down_proj_bias: ['down_proj.bias'] },
  },
};

const LAYOUTS: Readonly<Record<string, HfModuleLayout>> = {
  llama: DECODER_LM,
  mistral: DECODER_LM,
  mixtral: MIXTRAL,
  qwen2: DECODER_LM,
  qwen2_moe: MOE_DECODER,
  gemma: DECODER_LM,
  qwen3: DECODER_LM,
  qwen3_moe: MOE_DECODER,
  deepseek_v2: MOE_DECODER,
  deepseek_v3: MOE_DECODER,
  phi3: DECODER_LM,
  gemma2: DECODER_LM,
  gemma3_text: DECODER_LM,
  gpt_oss: GPT_OSS,
  olmo2: DECODER_LM,
  phi: DECODER_LM,
  gpt2: { base: 'transformer', inputEmbeddings: 'wte', outputEmbeddings: 'lm_head' },
  gpt_neox: { base: 'gpt_neox', inputEmbeddings: 'embed_in', outputEmbeddings: 'embed_out' },
  bert: BERT_LIKE('bert', 'cls.predictions.decoder'),
  roberta: BERT_LIKE('roberta', 'lm_head.decoder'),
  'xlm-roberta': BERT_LIKE('roberta', 'lm_head.decoder'),
  camembert: BERT_LIKE('roberta', 'lm_head.decoder'),
  distilbert: BERT_LIKE('distilbert', 'vocab_projector'),
  // DebertaV2ForMaskedLM with config.legacy (the default) returns cls.predictions.decoder.
  'deberta-v2': BERT_LIKE('deberta', 'cls.predictions.decoder'),
  modernbert: { base: 'model', inputEmbeddings: 'embeddings.tok_embeddings', outputEmbeddings: 'decoder' },
  // T5's base_model_prefix is 'transformer', which no T5 class has as an attribute: the model is its own base.
  t5: { base: 'transformer', inputEmbeddings: 'shared', outputEmbeddings: 'lm_head', stacks: ENCODER_DECODER },
  mt5: { base: 'transformer', inputEmbeddings: 'shared', outputEmbeddings: 'lm_head', stacks: ENCODER_DECODER },
  bart: { base: 'model', inputEmbeddings: 'shared', outputEmbeddings: 'lm_head', stacks: ENCODER_DECODER },
  mbart: { base: 'model', inputEmbeddings: 'shared', outputEmbeddings: 'lm_head', stacks: ENCODER_DECODER },
  // WhisperModel returns its decoder's embed_tokens; the conditional-generation head is proj_out.
  whisper: { base: 'model', inputEmbeddings: 'decoder.embed_tokens', outputEmbeddings: 'proj_out', stacks: ENCODER_DECODER, freezesEncoder: true },
  // ViTModel returns its patch embeddings (the Conv2d projection's module): pixels, not tokens, but what a script freezes.
  vit: { base: 'vit', inputEmbeddings: 'embeddings.patch_embeddings' },
  // CLIPVisionModel and SiglipVisionModel return their tower's patch embedding; their base_model_prefix is no attribute of theirs.
  clip_vision_model: { base: '', inputEmbeddings: 'vision_model.embeddings.patch_embedding' },
  siglip_vision_model: { base: '', inputEmbeddings: 'vision_model.embeddings.patch_embedding' },
  llava: VISION_LANGUAGE,
  gemma3: VISION_LANGUAGE,
  // Qwen-VL in transformers 4.49–4.51 (multimodal.ts): base_model_prefix 'model' is the text decoder beside `visual`;
  // get_input_embeddings() is model.embed_tokens, get_output_embeddings() lm_head, as a decoder LM's.
  qwen2_5_vl: QWEN_VL,
  qwen2_vl: QWEN_VL,
};

/** The layout of a model_type, or undefined for one outside the catalogue (its modules then stay unresolved). */
export function hfModuleLayout(modelType: string): HfModuleLayout | undefined {
  return Object.prototype.hasOwnProperty.call(LAYOUTS, modelType) ? LAYOUTS[modelType] : undefined;
}

/** Every model_type with a layout (a test checks the catalogue's builders all have one). */
export function laidOutModelTypes(): string[] {
  return Object.keys(LAYOUTS);
}
