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
import { hfModuleLayout } from '../huggingface/moduleLayouts';
import { hfBaseModelPath, hfPath, hfSubmoduleAt, joinModulePath } from './transformersModules';
import { native, type HfV, type Value } from './values';

const modelTypeOf = (v: HfV): string => String((v.module?.root ?? v).config.model_type);

/**
 * The input embedding, from the model or from its base model (`model.model`, `model.bert`, `model.base_model`):
 * transformers' PreTrainedModel defers to the base model, which returns its own table. Other submodules
 * (`model.model.layers[0]`) have no such method.
 */
function inputEmbeddings(of: HfV): HfV | undefined {
  const layout = hfModuleLayout(modelTypeOf(of));
  const base = hfBaseModelPath(of);
  const at = hfPath(of);
  // An encoder-decoder's stack (T5Stack, BartEncoder) returns its own embed_tokens (T5's and BART's shared table).
  if (layout?.stacks?.some((name) => joinModulePath(base, name) === at)) return hfSubmoduleAt(of, joinModulePath(at, 'embed_tokens'));
  if (!layout?.inputEmbeddings || (at !== '' && at !== base)) return undefined;
  return hfSubmoduleAt(of, joinModulePath(base, layout.inputEmbeddings));
}

/**
 * `get_encoder()` / `get_decoder()` of an encoder-decoder model or its base model: its stack of that name (absent in
 * T5EncoderModel's decoder). BartForConditionalGeneration's defers to its `model`, whose stacks they are.
 */
function stack(of: HfV, name: 'encoder' | 'decoder'): HfV | undefined {
  const at = hfPath(of);
  const base = hfBaseModelPath(of);
  return hfModuleLayout(modelTypeOf(of))?.stacks && (at === '' || at === base) ? hfSubmoduleAt(of, joinModulePath(base, name)) : undefined;
}

/** The encoder stack of a model whose architecture defines freeze_encoder() (Whisper's), from the model or its base. */
export function hfEncoderOf(of: HfV): HfV | undefined {
  return hfModuleLayout(modelTypeOf(of))?.freezesEncoder && (of.what === 'model' || of.what === 'module') ? stack(of, 'encoder') : undefined;
}

/** The output projection, from the model only: the head is not under the base model. */
function outputEmbeddings(of: HfV): HfV | undefined {
  const path = hfModuleLayout(modelTypeOf(of))?.outputEmbeddings;
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
