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
  /**
   * Module paths a newer transformers names where the graph (built in the 4.46–4.51 layout the checkpoints' keys keep)
   * holds them under another: transformers ≥ 4.52 moved a vision-language model's parts under its `model`
   * (`model.visual`, `model.language_model`), so a script written for it freezes them by those paths.
   */
  aliases?: Readonly<Record<string, string>>;
}

const DECODER_LM: HfModuleLayout = { base: 'model', inputEmbeddings: 'embed_tokens', outputEmbeddings: 'lm_head' };
const BERT_LIKE = (base: string, outputEmbeddings: string): HfModuleLayout => ({ base, inputEmbeddings: 'embeddings.word_embeddings', outputEmbeddings });
const ENCODER_DECODER = ['encoder', 'decoder'] as const;
/**
 * Vision-language models in transformers 4.46–4.51's layout (the one multimodal.ts names): the language model is an
 * attribute of the model, which is its own base model, and its embeddings and head are the language model's.
 */
const VISION_LANGUAGE: HfModuleLayout = { base: '', inputEmbeddings: 'language_model.model.embed_tokens', outputEmbeddings: 'language_model.lm_head' };

/**
 * Qwen-VL: transformers ≥ 4.52's model.visual and model.language_model are the graph's visual and model. (LLaVA's and
 * Gemma 3's newer paths go through a `model` their older layout lacks, and stay unresolved, said as such.)
 */
const QWEN_VL: HfModuleLayout = { ...DECODER_LM, aliases: { 'model.visual': 'visual', 'model.language_model': 'model' } };

const LAYOUTS: Readonly<Record<string, HfModuleLayout>> = {
  llama: DECODER_LM,
  mistral: DECODER_LM,
  mixtral: DECODER_LM,
  qwen2: DECODER_LM,
  qwen2_moe: DECODER_LM,
  gemma: DECODER_LM,
  qwen3: DECODER_LM,
  qwen3_moe: DECODER_LM,
  deepseek_v2: DECODER_LM,
  deepseek_v3: DECODER_LM,
  phi3: DECODER_LM,
  gemma2: DECODER_LM,
  gemma3_text: DECODER_LM,
  gpt_oss: DECODER_LM,
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
