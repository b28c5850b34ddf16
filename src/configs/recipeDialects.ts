/**
 * What the projects that train from recipes add to TrainingArguments, where it changes the setup WAP reads:
 * - LLaMA-Factory (`llamafactory-cli train recipe.yaml`; its ModelArguments and FinetuningArguments): it switches
 *   gradient checkpointing on itself unless `disable_gradient_checkpointing: true`; `finetuning_type` (default
 *   lora) trains adapters or a few layers on a frozen base; `quantization_bit` loads the base quantized;
 *   `pure_bf16` trains bf16 weights without autocast.
 * - trl's ModelConfig (TrlParser's `--config`, the alignment-handbook's recipes): `use_peft` (LoRA),
 *   `load_in_4bit` / `load_in_8bit`.
 * WAP models LoRA and quantized loading only where the code builds them (frontends/peft, frontends/quantization), so
 * a recipe that asks for them is planned as a full fine-tune and says so.
 */
import type { RecomputeMode } from '../protocol/plan';
import { given, recipeBool, type RecipeDoc } from './recipeSource';
import type { StatedSetup } from './setup';
import type { ArgumentSource } from './trainerArgumentSetup';

/** Keys only LLaMA-Factory's argument classes have. */
const LLAMA_FACTORY_KEYS = ['finetuning_type', 'stage', 'cutoff_len', 'lora_target', 'disable_gradient_checkpointing', 'quantization_bit'];

export const isLlamaFactoryRecipe = (doc: RecipeDoc): boolean => LLAMA_FACTORY_KEYS.some((k) => doc.top.get(k));

export const PLANNED_FULL = 'so this config\'s plan trains every parameter of the model (memory and step time over-stated)';

export function note(stated: StatedSetup, range: StatedSetup['anchor'], short: string, message: string): void {
  (stated.unmodelled ??= []).push({ range, short, message });
}

/** `finetuning_type`, LLaMA-Factory's default lora included: adapters or a few trained layers on a frozen base. */
function llamaFactoryMethod(doc: RecipeDoc, stated: StatedSetup): void {
  const type = given(doc, 'finetuning_type');
  const method = type ? type.value : 'lora';
  if (typeof method !== 'string' || method === 'full') return;
  const range = type?.range ?? stated.anchor;
  const said = `finetuning_type: ${method}${type ? '' : ' (LLaMA-Factory\'s default)'}`;
  if (method === 'freeze') return note(stated, range, 'frozen layers', `${said} trains only the last blocks (freeze_trainable_layers) with the rest frozen: WAP reads frozen layers only from the code, ${PLANNED_FULL}`);
  if (method !== 'lora' && method !== 'oft') return;
  const rank = given(doc, 'lora_rank')?.value;
  const target = given(doc, 'lora_target')?.value;
  const what = `${method === 'lora' ? 'LoRA' : 'OFT'} adapters${method === 'lora' && rank !== undefined ? ` of rank ${String(rank)}` : ''}${typeof target === 'string' ? ` on ${target === 'all' ? 'every Linear layer' : target}` : ''}`;
  note(stated, range, `${method === 'lora' ? 'LoRA' : 'OFT'} adapters`, `${said} trains ${what} with the base model frozen: WAP models LoRA only where the code builds it (peft's LoraConfig / get_peft_model), ${PLANNED_FULL}`);
}

/**
 * LLaMA-Factory checkpoints every trainable layer unless `disable_gradient_checkpointing: true`; the Trainer's own
 * `gradient_checkpointing: true` switches it on again. Switched off, the fix says disable_gradient_checkpointing.
 */
function llamaFactoryRecompute(doc: RecipeDoc, source: ArgumentSource, stated: StatedSetup): void {
  const disabled = recipeBool(doc, 'disable_gradient_checkpointing') ?? false;
  const trainer = recipeBool(doc, 'gradient_checkpointing') ?? false;
  if (disabled === 'run' || trainer === 'run') {
    delete stated.recompute;
    return;
  }
  const on = !disabled || trainer;
  const by = trainer ? 'gradient_checkpointing' : 'disable_gradient_checkpointing';
  stated.recompute = {
    value: on ? 'full' : 'none', stated: !!given(doc, by), range: source.valueRange(by) ?? stated.anchor,
    matches: (p: RecomputeMode) => (p !== 'none') === on,
    set: (r) => {
      const want = r !== 'none';
      const edits = want ? [source.setBool('disable_gradient_checkpointing', false)] : [source.setBool('disable_gradient_checkpointing', true), source.setBool('gradient_checkpointing', false)];
      return edits.every((e) => e !== undefined) ? edits.flat() : undefined;
    },
  };
}

/** The dialect's additions to what `readArgumentSetup` read from the recipe. */
export function applyRecipeDialect(doc: RecipeDoc, source: ArgumentSource, stated: StatedSetup): void {
  if (isLlamaFactoryRecipe(doc)) {
    llamaFactoryRecompute(doc, source, stated);
    llamaFactoryMethod(doc, stated);
    const bits = given(doc, 'quantization_bit');
    if (bits) note(stated, bits.range, 'quantized base model', `quantization_bit: ${String(bits.value)} loads the base model's weights quantized (QLoRA): WAP models quantized weights only where the code loads them (BitsAndBytesConfig), ${PLANNED_FULL}`);
    const pure = given(doc, 'pure_bf16');
    // bf16 weights, gradients and optimizer state without autocast: bf16 however the Trainer's flags read.
    if (recipeBool(doc, 'pure_bf16') === true) stated.precision = { value: 'bf16', stated: true, range: pure!.range };
    return;
  }
  // trl's ModelConfig, which TrlParser fills from the same recipe.
  if (recipeBool(doc, 'use_peft') === true) {
    const rank = given(doc, 'lora_r')?.value;
    note(stated, given(doc, 'use_peft')!.range, 'LoRA adapters', `use_peft: true trains LoRA adapters${rank !== undefined ? ` of rank ${String(rank)}` : ''} with the base model frozen: WAP models LoRA only where the code builds it (peft's LoraConfig / get_peft_model), ${PLANNED_FULL}`);
  }
  quantizedLoadNotes(doc, stated);
}

/** `load_in_4bit: true` / `load_in_8bit: true` (trl's ModelConfig, axolotl): a base model loaded quantized, said. */
export function quantizedLoadNotes(doc: RecipeDoc, stated: StatedSetup): void {
  for (const key of ['load_in_4bit', 'load_in_8bit']) {
    if (recipeBool(doc, key) === true) note(stated, given(doc, key)!.range, 'quantized base model', `${key}: true loads the base model's weights quantized: WAP models quantized weights only where the code loads them (BitsAndBytesConfig), ${PLANNED_FULL}`);
  }
}
