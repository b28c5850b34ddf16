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
];

const HEAD_SUFFIXES: Array<[string, HfHead]> = [
  ['ForCausalLM', 'causal-lm'], ['LMHeadModel', 'causal-lm'], ['ForMaskedLM', 'masked-lm'], ['ForPreTraining', 'pre-training'], ['ForSequenceClassification', 'sequence-classification'],
  ['ForTokenClassification', 'token-classification'], ['ForQuestionAnswering', 'question-answering'],
  ['ForConditionalGeneration', 'seq2seq-lm'], ['ForImageClassification', 'image-classification'], ['EncoderModel', 'base'], ['Model', 'base'],
];

/** `LlamaConfig` → 'llama'. */
export function configClassType(className: string): string | undefined {
  if (!className.endsWith('Config')) return undefined;
  const prefix = className.slice(0, -'Config'.length);
  return PREFIXES.find(([p]) => p === prefix)?.[1];
}

/** A class-name prefix as transformers spells it (`XLMRoberta`) → its model_type, if catalogued. */
export function prefixModelType(prefix: string): string | undefined {
  return PREFIXES.find(([p]) => p === prefix)?.[1];
}

/** `LlamaForCausalLM` → llama + causal-lm; `T5EncoderModel` → t5 + base (encoder only). */
export function modelClassType(className: string): { modelType: string; head: HfHead; encoderOnly?: boolean } | undefined {
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

export function boolField(config: HfConfig, key: string, fallback: boolean): boolean {
  const v = config[key];
  return typeof v === 'boolean' ? v : fallback;
}

export function strField(config: HfConfig, key: string, fallback: string): string {
  const v = config[key];
  return typeof v === 'string' ? v : fallback;
}
