/**
 * axolotl's YAML config (`axolotl train config.yml`, `accelerate launch -m axolotl.cli.train config.yml`), format
 * 'axolotl'. axolotl turns it into the Trainer's arguments, so it is read with the Trainer's semantics
 * (trainerArgumentSetup.ts) over axolotl's names (axolotlArguments.ts), plus what axolotl decides itself:
 * - micro_batch_size defaults to 1; without gradient_accumulation_steps, `batch_size` (per GPU) makes the
 *   accumulation batch_size // micro_batch_size (normalize_config), a value no edit here rewrites;
 * - `adapter: lora | qlora` and `load_in_4bit/8bit` are said, not planned (LoRA and quantized loading are modelled
 *   only where the code builds them), as for the other recipes (recipeDialects.ts);
 * - checkpoints offloaded to the host or disk (`gradient_checkpointing: offload`) are said.
 * `deepspeed: deepspeed_configs/zero3_bf16.json` is a ConfigLink read as the Trainer's (transformers checks it), and
 * the GPUs are the launch scripts' that pass the file (launchedBy.ts). `sequence_len` is the tokens per sample the model
 * is read at (trainerArgumentSetup.ts). The model is `base_model` (modelFor.ts), as from_pretrained finds it.
 */
import { axolotlArguments, OFFLOADED_CHECKPOINTS } from './axolotlArguments';
import { isAxolotlConfig } from './recipeDetect';
import { note, PLANNED_FULL, quantizedLoadNotes } from './recipeDialects';
import { given, type RecipeDoc } from './recipeSource';
import { yamlRecipe } from './recipeYaml';
import type { StatedSetup } from './setup';
import { readArgumentSetup } from './trainerArgumentSetup';
import { passedConfigReader } from './trainerRecipe';
import type { ConfigReader } from './types';

const LABEL = 'axolotl config';
/** Keys of which one must be top-level once parsed (the file's anchor is the first). */
const AXOLOTL_KEYS = ['base_model', 'micro_batch_size', 'gradient_accumulation_steps', 'batch_size'];
/** axolotl's default micro_batch_size (the Trainer's is 8). */
const DEFAULT_MICRO_BATCH = 1;

/** A whole number from 1, as axolotl's schema takes it. */
const whole = (doc: RecipeDoc, key: string): number | undefined => {
  const v = given(doc, key);
  return v?.kind === 'int' && (v.value as number) >= 1 ? (v.value as number) : undefined;
};

/** micro_batch_size's default and `batch_size`'s accumulation, which the Trainer's reading does not know. */
function axolotlBatch(doc: RecipeDoc, stated: StatedSetup): void {
  if (!given(doc, 'micro_batch_size') && stated.microBatch) {
    stated.microBatch = { value: DEFAULT_MICRO_BATCH, stated: false, range: stated.anchor, set: (n) => doc.set('micro_batch_size', n) };
  }
  const batch = given(doc, 'batch_size');
  if (given(doc, 'gradient_accumulation_steps') || !batch) return;
  const perGpu = whole(doc, 'batch_size');
  const micro = stated.microBatch?.value;
  // axolotl floors batch_size / micro_batch_size; below one step there is no accumulation it could run.
  const accumulation = perGpu !== undefined && micro !== undefined ? Math.floor(perGpu / micro) : 0;
  if (accumulation >= 1) stated.gradientAccumulation = { value: accumulation, stated: true, range: batch.range };
  else delete stated.gradientAccumulation;
}

/** What axolotl trains that WAP plans otherwise: adapters, a quantized base, offloaded checkpoints. */
function axolotlNotes(doc: RecipeDoc, stated: StatedSetup): void {
  const adapter = given(doc, 'adapter');
  if (adapter?.kind === 'string' && /^q?lora$/.test(adapter.value as string)) {
    const rank = given(doc, 'lora_r')?.value;
    note(stated, adapter.range, `${adapter.value === 'qlora' ? 'QLoRA' : 'LoRA'} adapters`, `adapter: ${String(adapter.value)} trains LoRA adapters${rank !== undefined ? ` of rank ${String(rank)}` : ''} with the base model frozen${adapter.value === 'qlora' ? ' and loaded in 4 bits' : ''}: WAP models LoRA only where the code builds it (peft's LoraConfig / get_peft_model), ${PLANNED_FULL}`);
  }
  quantizedLoadNotes(doc, stated);
  const checkpointing = given(doc, 'gradient_checkpointing');
  if (checkpointing?.kind === 'string' && OFFLOADED_CHECKPOINTS.has(checkpointing.value as string)) {
    note(stated, checkpointing.range, 'offloaded checkpoints', `gradient_checkpointing: ${String(checkpointing.value)} recomputes every layer and keeps its checkpoints in ${checkpointing.value === 'offload' ? 'host memory' : 'files on disk'}: WAP plans full recompute with the checkpoints on the GPU (memory over-stated, the copies' time not counted)`);
  }
}

/** The setup an axolotl config states, or undefined for a file whose axolotl keys are not at its top level. */
export function readAxolotl(_fileName: string, text: string): StatedSetup | undefined {
  const doc = yamlRecipe(text);
  const key = AXOLOTL_KEYS.find((k) => doc.top.get(k));
  if (!key) return undefined;
  const source = axolotlArguments(doc, doc.keyRange(key)!);
  const stated = readArgumentSetup(source, LABEL);
  axolotlBatch(doc, stated);
  axolotlNotes(doc, stated);
  return stated;
}

export const axolotlReader: ConfigReader = passedConfigReader('axolotl', isAxolotlConfig, readAxolotl);
