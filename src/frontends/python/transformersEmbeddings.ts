/**
 * `model.get_input_embeddings()` and `model.get_output_embeddings()`, which
 * fine-tuning scripts call to freeze (or keep training) the token embedding
 * and the LM head without naming them (and an encoder-decoder's
 * `get_encoder()` / `get_decoder()`, whose stacks have their own
 * `get_input_embeddings()`):
 *
 *     model.get_input_embeddings().requires_grad_(False)
 *     for p in model.get_output_embeddings().parameters(): p.requires_grad = False
 *
 * Each returns the submodule transformers' own method returns, as a path into
 * the graph WAP builds from the config (transformersModules.ts), so the freeze
 * becomes a freeze step like `model.model.embed_tokens.requires_grad_(False)`.
 * The paths are those the modeling files return (modeling_llama.py's
 * `self.embed_tokens` / `self.lm_head`, modeling_bert.py's
 * `self.embeddings.word_embeddings` / `self.cls.predictions.decoder`, …), and
 * one resolves only where the built graph has it: a model without an LM head
 * (a base `AutoModel`, a classifier), for which transformers returns None, or
 * a model type outside this table gives an unknown value, and the freeze stays
 * the warning frozenParameters.ts gives rather than a guess.
 *
 * A tied head (`tie_word_embeddings`: Qwen2-0.5B, GPT-2, Gemma, T5-small) shares
 * its weight with the input embedding: freezing `get_output_embeddings()`
 * freezes that one parameter, so the input embedding's layer is frozen as well,
 * as in torch (freezeSteps.ts reaches a tied weight through either module).
 */
import { hfBaseModelPath, hfPath, hfSubmoduleAt, joinModulePath } from './transformersModules';
import { native, type HfV, type Value } from './values';

/** `get_input_embeddings()` of each model type's base model, relative to it. */
const INPUT_EMBEDDINGS: Readonly<Record<string, string>> = {
  bert: 'embeddings.word_embeddings',
  roberta: 'embeddings.word_embeddings',
  'xlm-roberta': 'embeddings.word_embeddings',
  camembert: 'embeddings.word_embeddings',
  distilbert: 'embeddings.word_embeddings',
  gpt2: 'wte',
  gpt_neox: 'embed_in',
  llama: 'embed_tokens',
  mistral: 'embed_tokens',
  mixtral: 'embed_tokens',
  qwen2: 'embed_tokens',
  gemma: 'embed_tokens',
  qwen3: 'embed_tokens',
  qwen3_moe: 'embed_tokens',
  phi3: 'embed_tokens',
  gemma2: 'embed_tokens',
  gemma3_text: 'embed_tokens',
  t5: 'shared',
  mt5: 'shared',
  // ViTModel returns its patch embeddings (the Conv2d projection's module): pixels, not tokens, but what a script freezes.
  vit: 'embeddings.patch_embeddings',
};

/** `get_output_embeddings()` of each model type's LM-head models, from the model; ViT's heads have none. */
const OUTPUT_EMBEDDINGS: Readonly<Record<string, string>> = {
  bert: 'cls.predictions.decoder',
  roberta: 'lm_head.decoder',
  'xlm-roberta': 'lm_head.decoder',
  camembert: 'lm_head.decoder',
  distilbert: 'vocab_projector',
  gpt2: 'lm_head',
  gpt_neox: 'embed_out',
  llama: 'lm_head',
  mistral: 'lm_head',
  mixtral: 'lm_head',
  qwen2: 'lm_head',
  gemma: 'lm_head',
  qwen3: 'lm_head',
  qwen3_moe: 'lm_head',
  phi3: 'lm_head',
  gemma2: 'lm_head',
  gemma3_text: 'lm_head',
  t5: 'lm_head',
  mt5: 'lm_head',
};

/** The stacks of encoder-decoder model types (modeling_t5.py's `self.encoder` / `self.decoder`). */
const STACKS: Readonly<Record<string, readonly string[]>> = { t5: ['encoder', 'decoder'], mt5: ['encoder', 'decoder'] };

const modelTypeOf = (v: HfV): string => String((v.module?.root ?? v).config.model_type);

/**
 * The input embedding, from the model or from its base model (`model.model`, `model.bert`, `model.base_model`):
 * transformers' PreTrainedModel defers to the base model, which returns its own table. Other submodules
 * (`model.model.layers[0]`) have no such method.
 */
function inputEmbeddings(of: HfV): HfV | undefined {
  const relative = INPUT_EMBEDDINGS[modelTypeOf(of)];
  const base = hfBaseModelPath(of);
  const at = hfPath(of);
  // An encoder-decoder's stack (T5Stack) returns its own embed_tokens, which is the shared table.
  if (STACKS[modelTypeOf(of)]?.includes(at)) return hfSubmoduleAt(of, joinModulePath(at, 'embed_tokens'));
  if (!relative || (at !== '' && at !== base)) return undefined;
  return hfSubmoduleAt(of, joinModulePath(base, relative));
}

/** `get_encoder()` / `get_decoder()` of an encoder-decoder model: its stack of that name (absent in T5EncoderModel's decoder). */
function stack(of: HfV, name: 'encoder' | 'decoder'): HfV | undefined {
  return STACKS[modelTypeOf(of)] && hfPath(of) === '' ? hfSubmoduleAt(of, name) : undefined;
}

/** The output projection, from the model only: the head is not under the base model. */
function outputEmbeddings(of: HfV): HfV | undefined {
  const path = OUTPUT_EMBEDDINGS[modelTypeOf(of)];
  return path && hfPath(of) === '' ? hfSubmoduleAt(of, path) : undefined;
}

/** `get_input_embeddings` / `get_output_embeddings` / `get_encoder` / `get_decoder` of a model or submodule value; undefined for any other name. */
export function hfEmbeddingsMethod(obj: HfV, name: string): Value | undefined {
  if (obj.what !== 'model' && obj.what !== 'module') return undefined;
  const find = name === 'get_input_embeddings' ? inputEmbeddings : name === 'get_output_embeddings' ? outputEmbeddings
    : name === 'get_encoder' ? (v: HfV) => stack(v, 'encoder') : name === 'get_decoder' ? (v: HfV) => stack(v, 'decoder') : undefined;
  if (!find) return undefined;
  return native(name, () => find(obj) ?? { k: 'unknown', why: `WAP cannot tell which module ${name}() returns for this ${obj.className} (or it has none)` });
}
