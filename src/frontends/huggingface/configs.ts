/**
 * Hugging Face configs as plain data: each architecture's defaults (the keyword
 * defaults of its config class's `__init__` in transformers 4.46, plus the
 * PretrainedConfig defaults it inherits) and the class names that select an
 * architecture and a head. Pure: no file access.
 */
import type { AttrValue } from '../../core/ir';

export type HfConfig = Record<string, AttrValue>;

/** What sits on top of the base model (which `…For…` class, or the bare `…Model`). */
export type HfHead = 'base' | 'causal-lm' | 'masked-lm' | 'pre-training' | 'sequence-classification' | 'token-classification' | 'question-answering' | 'seq2seq-lm' | 'image-classification';

/** PretrainedConfig defaults every config inherits (transformers 4.46, configuration_utils.py). */
const PRETRAINED: HfConfig = { tie_word_embeddings: true, num_labels: 2 };

const LLAMA: HfConfig = {
  vocab_size: 32000, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32,
  num_key_value_heads: null, hidden_act: 'silu', max_position_embeddings: 2048, tie_word_embeddings: false,
  attention_bias: false, mlp_bias: false, head_dim: null, attention_dropout: 0.0,
};

/**
 * Qwen2VLConfig's and Qwen2_5_VLConfig's keyword defaults for the text model (configuration_qwen2_vl.py,
 * configuration_qwen2_5_vl.py): 80 layers of 8192, 64 query / 8 key-value heads, 29568, vocab 152,064, untied.
 */
const QWEN_VL_TEXT: HfConfig = {
  ...LLAMA, vocab_size: 152064, hidden_size: 8192, intermediate_size: 29568, num_hidden_layers: 80, num_attention_heads: 64, num_key_value_heads: 8,
  max_position_embeddings: 32768, use_sliding_window: false, sliding_window: 4096, max_window_layers: 80,
};

/** Per model_type: transformers 4.46 `XConfig.__init__` defaults (only the fields that shape the model). */
export const CONFIG_DEFAULTS: Record<string, HfConfig> = {
  llama: LLAMA,
  mistral: { ...LLAMA, intermediate_size: 14336, num_key_value_heads: 8, max_position_embeddings: 4096 * 32 },
  mixtral: { ...LLAMA, intermediate_size: 14336, num_key_value_heads: 8, max_position_embeddings: 4096 * 32, num_experts_per_tok: 2, num_local_experts: 8 },
  qwen2: { ...LLAMA, vocab_size: 151936, intermediate_size: 22016, num_key_value_heads: 32, max_position_embeddings: 32768 },
  gemma: {
    ...LLAMA, vocab_size: 256000, hidden_size: 3072, intermediate_size: 24576, num_hidden_layers: 28, num_attention_heads: 16,
    num_key_value_heads: 16, head_dim: 256, hidden_act: 'gelu_pytorch_tanh', hidden_activation: null, max_position_embeddings: 8192, tie_word_embeddings: true,
  },
  // Qwen3Config (transformers 4.51, where Qwen3 arrives): 32 layers of 4096 with 32 key/value heads, head_dim stated (128).
  qwen3: {
    ...LLAMA, vocab_size: 151936, intermediate_size: 22016, num_key_value_heads: 32, head_dim: 128, max_position_embeddings: 32768,
    use_sliding_window: false, sliding_window: 4096, max_window_layers: 28,
  },
  // Qwen3MoeConfig (transformers 4.51): 24 layers of 2048, 32 query / 4 key-value heads, 128 experts of 768, top 8.
  qwen3_moe: {
    ...LLAMA, vocab_size: 151936, hidden_size: 2048, intermediate_size: 6144, num_hidden_layers: 24, num_attention_heads: 32, num_key_value_heads: 4,
    max_position_embeddings: 32768, use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, decoder_sparse_step: 1,
    moe_intermediate_size: 768, num_experts_per_tok: 8, num_experts: 128, norm_topk_prob: false, mlp_only_layers: null,
  },
  // Qwen2MoeConfig (transformers 4.46): Qwen1.5-MoE-A2.7B's shape, 60 experts of 1408, top 4, a shared expert of 5632;
  // qkv_bias (True) is a later field, before it the q/k/v biases were unconditional.
  qwen2_moe: {
    ...LLAMA, vocab_size: 151936, hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 24, num_attention_heads: 16, num_key_value_heads: 16,
    max_position_embeddings: 32768, use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, decoder_sparse_step: 1,
    moe_intermediate_size: 1408, shared_expert_intermediate_size: 5632, num_experts_per_tok: 4, num_experts: 60, norm_topk_prob: false,
    mlp_only_layers: null, qkv_bias: true,
  },
  // DeepseekV2Config (transformers 4.52): a Llama-7B-sized body; num_experts_per_tok is None (a config must state it).
  deepseek_v2: {
    vocab_size: 32000, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: null,
    hidden_act: 'silu', max_position_embeddings: 2048, tie_word_embeddings: false, attention_bias: false, attention_dropout: 0.0, mlp_bias: false,
    first_k_dense_replace: 0, kv_lora_rank: 512, q_lora_rank: 1536, n_group: null, n_routed_experts: 64, n_shared_experts: 2, qk_nope_head_dim: 128,
    qk_rope_head_dim: 64, routed_scaling_factor: 1.0, topk_group: null, topk_method: 'greedy', v_head_dim: 128, num_experts_per_tok: null,
    norm_topk_prob: false, moe_intermediate_size: 1407,
  },
  // DeepseekV3Config (transformers 4.51): DeepSeek-V3's shape, 61 layers of 7168, 256 experts of 2048 (top 8) and one
  // shared, the first 3 layers dense; num_nextn_predict_layers is no field of it (transformers builds no MTP module).
  deepseek_v3: {
    vocab_size: 129280, hidden_size: 7168, intermediate_size: 18432, moe_intermediate_size: 2048, num_hidden_layers: 61, num_attention_heads: 128,
    num_key_value_heads: 128, n_shared_experts: 1, n_routed_experts: 256, routed_scaling_factor: 2.5, kv_lora_rank: 512, q_lora_rank: 1536,
    qk_rope_head_dim: 64, v_head_dim: 128, qk_nope_head_dim: 128, n_group: 8, topk_group: 4, num_experts_per_tok: 8, first_k_dense_replace: 3,
    norm_topk_prob: true, hidden_act: 'silu', max_position_embeddings: 4096, tie_word_embeddings: false, rope_scaling: null, attention_bias: false,
    attention_dropout: 0.0,
  },
  // Phi3Config: Phi-3-mini's shape; no head_dim (hidden / heads), no attention_bias field (the projections have none).
  phi3: {
    vocab_size: 32064, hidden_size: 3072, intermediate_size: 8192, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: null,
    hidden_act: 'silu', max_position_embeddings: 4096, tie_word_embeddings: false, resid_pdrop: 0.0, embd_pdrop: 0.0, attention_dropout: 0.0,
    sliding_window: null,
  },
  // Gemma2Config: Gemma-2-2B's shape; the modeling file reads hidden_activation.
  gemma2: {
    vocab_size: 256000, hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26, num_attention_heads: 8, num_key_value_heads: 4,
    head_dim: 256, hidden_activation: 'gelu_pytorch_tanh', max_position_embeddings: 8192, tie_word_embeddings: true, attention_bias: false,
    attention_dropout: 0.0, query_pre_attn_scalar: 256, sliding_window: 4096, final_logit_softcapping: 30.0, attn_logit_softcapping: 50.0,
  },
  // Gemma3TextConfig (transformers 4.50): Gemma 3 4B's text shape, no soft-caps, five local layers to a global one.
  gemma3_text: {
    vocab_size: 262208, hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26, num_attention_heads: 8, num_key_value_heads: 4,
    head_dim: 256, hidden_activation: 'gelu_pytorch_tanh', max_position_embeddings: 131072, tie_word_embeddings: true, attention_bias: false,
    attention_dropout: 0.0, query_pre_attn_scalar: 256, sliding_window: 4096, sliding_window_pattern: 6, final_logit_softcapping: null, attn_logit_softcapping: null,
  },
  gpt2: { vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null, activation_function: 'gelu_new', tie_word_embeddings: true,
    resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1,
  },
  gpt_neox: {
    vocab_size: 50432, hidden_size: 6144, num_hidden_layers: 44, num_attention_heads: 64, intermediate_size: 24576, hidden_act: 'gelu',
    max_position_embeddings: 2048, use_parallel_residual: true, attention_bias: true, tie_word_embeddings: false,
    attention_dropout: 0.0, hidden_dropout: 0.0,
  },
  bert: {
    vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2,
    hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, classifier_dropout: null,
  },
  // RobertaConfig keeps BertConfig's keyword defaults (the released checkpoints override vocab and positions in config.json).
  roberta: {
    vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2,
    hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, classifier_dropout: null,
  },
  // XLMRobertaConfig and CamembertConfig keep BertConfig's keyword defaults too; their checkpoints set the rest.
  'xlm-roberta': {
    vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2,
    hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, classifier_dropout: null,
  },
  camembert: {
    vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2,
    hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, classifier_dropout: null,
  },
  // DistilBertConfig's defaults (distilbert-base-uncased's shape).
  distilbert: {
    vocab_size: 30522, max_position_embeddings: 512, sinusoidal_pos_embds: false, n_layers: 6, n_heads: 12, dim: 768, hidden_dim: 3072,
    dropout: 0.1, attention_dropout: 0.1, activation: 'gelu', seq_classif_dropout: 0.2,
  },
  // ModernBertConfig (transformers 4.48, where ModernBERT arrives): ModernBERT-base's shape, a global layer every third,
  // local windows of 128 tokens, no bias but the MLM decoder's, no dropout, 'cls' pooling.
  modernbert: {
    vocab_size: 50368, hidden_size: 768, intermediate_size: 1152, num_hidden_layers: 22, num_attention_heads: 12, hidden_activation: 'gelu',
    max_position_embeddings: 8192, norm_bias: false, attention_bias: false, attention_dropout: 0.0, global_attn_every_n_layers: 3, local_attention: 128,
    embedding_dropout: 0.0, mlp_bias: false, mlp_dropout: 0.0, decoder_bias: true, classifier_pooling: 'cls', classifier_dropout: 0.0,
    classifier_bias: false, classifier_activation: 'gelu', sparse_prediction: false, tie_word_embeddings: true,
  },
  // DebertaV2Config (deberta-v2-xlarge's sizes): relative attention off, absolute positions on, no token types, the legacy
  // MLM head; share_att_key, position_buckets, norm_rel_ebd and conv_kernel_size are getattr reads (deberta.ts).
  'deberta-v2': {
    vocab_size: 128100, hidden_size: 1536, num_hidden_layers: 24, num_attention_heads: 24, intermediate_size: 6144, hidden_act: 'gelu',
    hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 0, relative_attention: false,
    max_relative_positions: -1, position_biased_input: true, pos_att_type: null, pooler_dropout: 0.0, pooler_hidden_act: 'gelu', legacy: true,
  },
  // BartConfig (bart-large's shape): 12 + 12 layers of 1024, 16 heads, 4096 FFN; its num_labels defaults to 3.
  bart: {
    vocab_size: 50265, max_position_embeddings: 1024, d_model: 1024, encoder_layers: 12, decoder_layers: 12, encoder_attention_heads: 16, decoder_attention_heads: 16,
    encoder_ffn_dim: 4096, decoder_ffn_dim: 4096, activation_function: 'gelu', dropout: 0.1, attention_dropout: 0.0, activation_dropout: 0.0, classifier_dropout: 0.0,
    encoder_layerdrop: 0.0, decoder_layerdrop: 0.0, scale_embedding: false, num_labels: 3,
  },
  // MBartConfig keeps BartConfig's sizes and dropouts, without BART's num_labels (PretrainedConfig's 2).
  mbart: {
    vocab_size: 50265, max_position_embeddings: 1024, d_model: 1024, encoder_layers: 12, decoder_layers: 12, encoder_attention_heads: 16, decoder_attention_heads: 16,
    encoder_ffn_dim: 4096, decoder_ffn_dim: 4096, activation_function: 'gelu', dropout: 0.1, attention_dropout: 0.0, activation_dropout: 0.0, classifier_dropout: 0.0,
    encoder_layerdrop: 0.0, decoder_layerdrop: 0.0, scale_embedding: false,
  },
  // WhisperConfig (whisper-tiny's shape): 4 + 4 layers of 384, 6 heads, 1536 FFN, 80 mel bins, no dropout.
  whisper: {
    vocab_size: 51865, num_mel_bins: 80, d_model: 384, encoder_layers: 4, decoder_layers: 4, encoder_attention_heads: 6, decoder_attention_heads: 6,
    encoder_ffn_dim: 1536, decoder_ffn_dim: 1536, activation_function: 'gelu', dropout: 0.0, attention_dropout: 0.0, activation_dropout: 0.0,
    encoder_layerdrop: 0.0, decoder_layerdrop: 0.0, scale_embedding: false, max_source_positions: 1500, max_target_positions: 448,
  },
  // CLIPVisionConfig (transformers 4.46): ViT-B/32's tower with quick_gelu; checkpoints state their own sizes.
  clip_vision_model: {
    hidden_size: 768, intermediate_size: 3072, num_hidden_layers: 12, num_attention_heads: 12, num_channels: 3, image_size: 224, patch_size: 32,
    hidden_act: 'quick_gelu', attention_dropout: 0.0,
  },
  // SiglipVisionConfig: siglip-base-patch16-224's tower. vision_use_head is no field of it: the head is built unless a
  // config sets it false (modeling_siglip.py, visionTowers.ts).
  siglip_vision_model: {
    hidden_size: 768, intermediate_size: 3072, num_hidden_layers: 12, num_attention_heads: 12, num_channels: 3, image_size: 224, patch_size: 16,
    hidden_act: 'gelu_pytorch_tanh', attention_dropout: 0.0,
  },
  // LlavaConfig: LlamaConfig() and llava-1.5's CLIP ViT-L/14-336 tower where the nested configs are absent (multimodal.ts).
  llava: {
    text_config: { model_type: 'llama' },
    vision_config: { model_type: 'clip_vision_model', hidden_size: 1024, intermediate_size: 4096, num_hidden_layers: 24, num_attention_heads: 16, image_size: 336, patch_size: 14, projection_dim: 768 },
    image_token_index: 32000, projector_hidden_act: 'gelu', vision_feature_select_strategy: 'default', vision_feature_layer: -2, image_seq_length: 576, multimodal_projector_bias: true,
    tie_word_embeddings: false,
  },
  // Gemma3Config (transformers 4.50): Gemma3TextConfig() and SiglipVisionConfig() where absent, 256 tokens an image.
  gemma3: {
    text_config: { model_type: 'gemma3_text' }, vision_config: { model_type: 'siglip_vision_model' }, mm_tokens_per_image: 256,
    boi_token_index: 255999, eoi_token_index: 256000, image_token_index: 262144,
  },
  // GptOssConfig (transformers 4.55, where GPT-OSS arrives): gpt-oss-120b's shape, 36 layers of 2880, 64 query / 8
  // key-value heads of 64, 128 experts of 2880 (top 4), a 128-token window on the even layers (layer_types None), an
  // untied head over 201,088 tokens. attention_bias is no keyword there: __init__ sets it True (later releases make it a
  // field defaulting to True); swiglu_limit 7.0 is the clamp GptOssExperts reads.
  gpt_oss: {
    vocab_size: 201088, hidden_size: 2880, intermediate_size: 2880, num_hidden_layers: 36, num_attention_heads: 64, num_key_value_heads: 8,
    head_dim: 64, hidden_act: 'silu', max_position_embeddings: 131072, tie_word_embeddings: false, attention_bias: true, attention_dropout: 0.0,
    sliding_window: 128, layer_types: null, num_local_experts: 128, num_experts_per_tok: 4, swiglu_limit: 7.0, router_aux_loss_coef: 0.9,
    output_router_logits: false,
  },
  // Olmo2Config (transformers 4.47, where OLMo 2 arrives): the 7B's body over OLMo 1's 50,304-token vocabulary and 2,048
  // positions (the released checkpoints state 100,352 and 4,096), untied, no attention bias.
  olmo2: {
    vocab_size: 50304, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: null,
    hidden_act: 'silu', max_position_embeddings: 2048, tie_word_embeddings: false, attention_bias: false, attention_dropout: 0.0,
  },
  // PhiConfig (transformers 4.46): Phi-1's shape, 24 layers of 2048, 32 heads, 8192 MLP, half of each head rotating, no
  // dropout, untied; Phi-2's file states its own sizes, partial_rotary_factor 0.4 and resid_pdrop 0.1.
  phi: {
    vocab_size: 51200, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 24, num_attention_heads: 32, num_key_value_heads: null,
    hidden_act: 'gelu_new', max_position_embeddings: 2048, tie_word_embeddings: false, partial_rotary_factor: 0.5, qk_layernorm: false,
    resid_pdrop: 0.0, embd_pdrop: 0.0, attention_dropout: 0.0,
  },
  // Qwen2_5_VLConfig (transformers 4.49–4.51, one flat config; later Qwen2_5_VLTextConfig, the same defaults): the
  // text model's fields at the top level, untied; vision_config holds Qwen2_5_VLVisionConfig's keyword defaults,
  // which multimodal.ts fills in under a checkpoint's own vision_config (hidden_size 3584 is that class's default; the
  // released towers state 1280).
  qwen2_5_vl: {
    ...QWEN_VL_TEXT,
    vision_config: {
      depth: 32, hidden_size: 3584, hidden_act: 'silu', intermediate_size: 3420, num_heads: 16, in_channels: 3, patch_size: 14, spatial_merge_size: 2,
      temporal_patch_size: 2, window_size: 112, out_hidden_size: 3584, fullatt_block_indexes: [7, 15, 23, 31],
    },
  },
  // Qwen2VLConfig: the same text defaults; Qwen2VLVisionConfig's (embed_dim is the tower's width, hidden_size the
  // merger's output, quick_gelu in an fc1/fc2 MLP of embed_dim · mlp_ratio).
  qwen2_vl: {
    ...QWEN_VL_TEXT,
    vision_config: {
      depth: 32, embed_dim: 1280, hidden_size: 3584, hidden_act: 'quick_gelu', mlp_ratio: 4, num_heads: 16, in_channels: 3, patch_size: 14,
      spatial_merge_size: 2, temporal_patch_size: 2,
    },
  },
  t5: {
    vocab_size: 32128, d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_decoder_layers: null, num_heads: 8,
    relative_attention_num_buckets: 32, feed_forward_proj: 'relu', tie_word_embeddings: true, dropout_rate: 0.1,
  },
  // MT5Config's keyword defaults (mt5-small); MT5 is T5 v1.1's architecture over a multilingual vocabulary.
  mt5: {
    vocab_size: 250112, d_model: 512, d_kv: 64, d_ff: 1024, num_layers: 8, num_decoder_layers: null, num_heads: 6,
    relative_attention_num_buckets: 32, feed_forward_proj: 'gated-gelu', tie_word_embeddings: false, dropout_rate: 0.1,
  },
  vit: { hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', image_size: 224, patch_size: 16, num_channels: 3, qkv_bias: true,
    hidden_dropout_prob: 0.0, attention_probs_dropout_prob: 0.0,
  },
};

/** Class-name prefixes as transformers spells them → model_type. */
const PREFIXES: Array<[string, string]> = [
  ['GPTNeoX', 'gpt_neox'], ['GPT2', 'gpt2'], ['Llama', 'llama'], ['Mistral', 'mistral'], ['Mixtral', 'mixtral'], ['Qwen2', 'qwen2'], ['Qwen3', 'qwen3'], ['Qwen3Moe', 'qwen3_moe'],
  ['Phi3', 'phi3'], ['Gemma', 'gemma'], ['Gemma2', 'gemma2'], ['Gemma3', 'gemma3_text'], ['Gemma3Text', 'gemma3_text'], ['Bert', 'bert'], ['Roberta', 'roberta'], ['XLMRoberta', 'xlm-roberta'], ['Camembert', 'camembert'], ['DistilBert', 'distilbert'], ['T5', 't5'], ['MT5', 'mt5'], ['ViT', 'vit'],
  ['ModernBert', 'modernbert'], ['DebertaV2', 'deberta-v2'],
  ['Bart', 'bart'], ['MBart', 'mbart'], ['Whisper', 'whisper'],
  ['CLIPVision', 'clip_vision_model'], ['SiglipVision', 'siglip_vision_model'], ['Llava', 'llava'],
  ['Qwen2Moe', 'qwen2_moe'], ['DeepseekV2', 'deepseek_v2'], ['DeepseekV3', 'deepseek_v3'],
  ['Qwen2_5_VL', 'qwen2_5_vl'], ['Qwen2VL', 'qwen2_vl'],
  ['GptOss', 'gpt_oss'], ['Olmo2', 'olmo2'], ['Phi', 'phi'],
];

/**
 * Classes of one prefix that are not one model_type: Gemma 3's `Gemma3Config`, `Gemma3ForConditionalGeneration` and
 * `Gemma3Model` are the vision-language model (model_type 'gemma3'), its `Gemma3TextConfig`, `Gemma3ForCausalLM` and
 * `Gemma3TextModel` the text model the 'Gemma3' prefix names (modeling_gemma3.py, configuration_gemma3.py).
 */
const VISION_LANGUAGE_CLASSES: Readonly<Record<string, { modelType: string; head?: HfHead }>> = {
  Gemma3Config: { modelType: 'gemma3' },
  Gemma3ForConditionalGeneration: { modelType: 'gemma3', head: 'seq2seq-lm' },
  Gemma3Model: { modelType: 'gemma3', head: 'base' },
};

const HEAD_SUFFIXES: Array<[string, HfHead]> = [
  ['ForCausalLM', 'causal-lm'], ['LMHeadModel', 'causal-lm'], ['ForMaskedLM', 'masked-lm'], ['ForPreTraining', 'pre-training'], ['ForSequenceClassification', 'sequence-classification'],
  ['ForTokenClassification', 'token-classification'], ['ForQuestionAnswering', 'question-answering'],
  ['ForConditionalGeneration', 'seq2seq-lm'], ['ForImageClassification', 'image-classification'], ['EncoderModel', 'base'], ['Model', 'base'],
];

/** `LlamaConfig` → 'llama'. */
export function configClassType(className: string): string | undefined {
  if (!className.endsWith('Config')) return undefined;
  if (Object.prototype.hasOwnProperty.call(VISION_LANGUAGE_CLASSES, className)) return VISION_LANGUAGE_CLASSES[className].modelType;
  const prefix = className.slice(0, -'Config'.length);
  return PREFIXES.find(([p]) => p === prefix)?.[1];
}

/** A class-name prefix as transformers spells it (`XLMRoberta`) → its model_type, if catalogued. */
export function prefixModelType(prefix: string): string | undefined {
  return PREFIXES.find(([p]) => p === prefix)?.[1];
}

/** `LlamaForCausalLM` → llama + causal-lm; `T5EncoderModel` → t5 + base (encoder only). */
export function modelClassType(className: string): { modelType: string; head: HfHead; encoderOnly?: boolean } | undefined {
  const composite = Object.prototype.hasOwnProperty.call(VISION_LANGUAGE_CLASSES, className) ? VISION_LANGUAGE_CLASSES[className] : undefined;
  if (composite?.head) return { modelType: composite.modelType, head: composite.head };
  for (const [suffix, head] of HEAD_SUFFIXES) {
    if (!className.endsWith(suffix)) continue;
    const prefix = className.slice(0, -suffix.length);
    const modelType = PREFIXES.find(([p]) => p === prefix)?.[1];
    if (modelType) return { modelType, head, ...(suffix === 'EncoderModel' ? { encoderOnly: true } : {}) };
  }
  return undefined;
}

/**
 * Why a transformers model class is outside the catalogue (`FalconForCausalLM`, `CLIPModel`: its architecture;
 * `BertForQuestionAnswering`: its head), or undefined when it is in it or is not a model class one builds
 * (`PreTrainedModel`, `AutoModel…`, TF/Flax classes).
 */
export function uncataloguedModelClass(className: string): string | undefined {
  const auto = /^AutoModelFor(\w+)$/.exec(className);
  if (auto && !autoClassHead(className)) return `the ${auto[1]} head is not (auto classes: AutoModel, ${Object.keys(AUTO_HEADS).map((h) => `AutoModelFor${h}`).join(', ')})`;
  if (modelClassType(className) || /^(Auto|TF|Flax|PreTrained|Pretrained)/.test(className)) return undefined;
  const m = /^([A-Z][A-Za-z0-9]*?)(For[A-Z][A-Za-z0-9]+|LMHeadModel|EncoderModel|Model)$/.exec(className);
  if (!m) return undefined;
  const family = PREFIXES.find(([p]) => p === m[1])?.[1];
  if (family) return `its architecture (${family}) is, but not the ${m[2]} head (heads: ${HEAD_SUFFIXES.map(([h]) => h).join(', ')})`;
  return `known architectures: ${knownModelTypes().join(', ')}`;
}

/** `AutoModelForCausalLM` → causal-lm; `AutoModel` → base. */
const AUTO_HEADS: Readonly<Record<string, HfHead>> = {
  CausalLM: 'causal-lm', MaskedLM: 'masked-lm', PreTraining: 'pre-training', SequenceClassification: 'sequence-classification', TokenClassification: 'token-classification', QuestionAnswering: 'question-answering', Seq2SeqLM: 'seq2seq-lm', ImageClassification: 'image-classification',
  // WhisperForConditionalGeneration, which AutoModelForSpeechSeq2Seq loads, is the same seq2seq LM head.
  SpeechSeq2Seq: 'seq2seq-lm',
  // Vision-language ForConditionalGeneration classes (Gemma 3's, LLaVA's), which these load (Vision2Seq is the older name).
  ImageTextToText: 'seq2seq-lm', Vision2Seq: 'seq2seq-lm',
};

export function autoClassHead(className: string): HfHead | undefined {
  if (className === 'AutoModel') return 'base';
  const m = /^AutoModelFor(\w+)$/.exec(className);
  return m && Object.prototype.hasOwnProperty.call(AUTO_HEADS, m[1]) ? AUTO_HEADS[m[1]] : undefined;
}

/** The config with the architecture's defaults filled in for every field the user did not give. */
export function withDefaults(modelType: string, given: HfConfig): HfConfig {
  return { ...PRETRAINED, ...(CONFIG_DEFAULTS[modelType] ?? {}), ...given, model_type: modelType };
}

export function knownModelTypes(): string[] {
  return Object.keys(CONFIG_DEFAULTS);
}

/** An integer field (a positive one unless `allowZero`); throws a readable error for the diagnostic. */
export function intField(config: HfConfig, key: string, fallback?: number): number {
  const v = config[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`config field '${key}' must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * A dropout probability in [0, 1] (0 when the config sets it to null and gives no fallback); anything else is a
 * readable error: a dropout that cannot be read is never silently 0.
 */
export function rateField(config: HfConfig, key: string, fallback = 0): number {
  const v = config[key] ?? fallback;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new Error(`config field '${key}' must be a dropout probability between 0 and 1, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Set on a config when the script built the base model with add_pooling_layer=False (BertModel, RobertaModel, ViTModel
 * take it in __init__ and from_pretrained): the builders then leave the pooler out. Not a config.json key.
 */
export const POOLER_OFF = '_wap_no_pooling_layer';

export function boolField(config: HfConfig, key: string, fallback: boolean): boolean {
  const v = config[key];
  return typeof v === 'boolean' ? v : fallback;
}

export function strField(config: HfConfig, key: string, fallback: string): string {
  const v = config[key];
  return typeof v === 'string' ? v : fallback;
}
