/**
 * The Hugging Face Trainer's arguments as a recipe: a YAML (or JSON) file that HfArgumentParser.parse_yaml_file /
 * parse_json_file, TrlParser (`--config recipe.yaml`) or LLaMA-Factory (`llamafactory-cli train recipe.yaml`) loads
 * into TrainingArguments, as the alignment-handbook's and LLaMA-Factory's recipes are written:
 *   bf16: true
 *   gradient_checkpointing: true
 *   per_device_train_batch_size: 16
 *   deepspeed: examples/deepspeed/ds_z3_config.json
 * Read with the command line's semantics (trainerArgumentSetup.ts, over recipeSource.ts), what LLaMA-Factory and
 * trl add (recipeDialects.ts), a DeepSpeed JSON by path with the values transformers checks against it
 * (linkedConfig.ts), and the GPUs of the launch scripts that pass the recipe (launchedBy.ts). Fixes write top-level
 * keys (YAML: in place, or a new last entry; comments and key order stay).
 *
 * The recipe names its model (`model_name_or_path: org/name`) but WAP plans models from code: the model is the one
 * the launched script builds (modelFor.ts), or none.
 */
import { withLaunchedWorld } from './launchedBy';
import { withLinkedConfig } from './linkedConfig';
import { isTrainerRecipe, RECIPE_KEYS } from './recipeDetect';
import { applyRecipeDialect, isLlamaFactoryRecipe } from './recipeDialects';
import { jsonRecipe } from './recipeJson';
import { recipeArguments, type RecipeDoc } from './recipeSource';
import { yamlRecipe } from './recipeYaml';
import { compareSetup, setupNotes, type StatedSetup } from './setup';
import { readArgumentSetup } from './trainerArgumentSetup';
import type { ConfigReader, FileAccess, TextRange } from './types';

/** The setup a recipe states, or undefined for a file whose Trainer keys are not at its top level. */
export function readRecipe(fileName: string, text: string): StatedSetup | undefined {
  const doc: RecipeDoc = /\.json$/i.test(fileName) ? jsonRecipe(text) : yamlRecipe(text);
  const key = RECIPE_KEYS.find((k) => doc.top.get(k));
  if (!key) return undefined;
  const anchor: TextRange = doc.keyRange(key)!;
  const source = recipeArguments(doc, anchor);
  const stated = readArgumentSetup(source, isLlamaFactoryRecipe(doc) ? 'LLaMA-Factory recipe' : 'Hugging Face Trainer recipe');
  applyRecipeDialect(doc, source, stated);
  return stated;
}

/** The model a recipe names (`model_name_or_path: org/name` or a folder), as written; undefined when it names none. */
export function recipeModelReference(fileName: string, text: string): { ref: string; key: string } | undefined {
  const doc: RecipeDoc = /\.json$/i.test(fileName) ? jsonRecipe(text) : yamlRecipe(text);
  const v = doc.top.get('model_name_or_path');
  return v?.kind === 'string' && typeof v.value === 'string' && v.value.trim() !== '' ? { ref: v.value.trim(), key: doc.keyword('model_name_or_path') } : undefined;
}

/**
 * With the DeepSpeed JSON it names and the GPUs its launch scripts start: every GPU a data-parallel replica (the
 * Trainer has no model-parallel degree), so the global batch is the one the run trains with.
 */
function launched(fileName: string, setup: StatedSetup, files: FileAccess | undefined): StatedSetup {
  const stated = withLaunchedWorld(fileName, withLinkedConfig(fileName, setup, files), files, 'argument');
  return stated.world === undefined ? stated : { ...stated, dataParallel: { value: stated.world, stated: true, range: stated.anchor } };
}

export const trainerRecipeReader: ConfigReader = {
  format: 'hf-trainer-recipe',
  launchedAs: 'argument',
  detect: isTrainerRecipe,
  check(fileName, text, plan, files) {
    const setup = readRecipe(fileName, text);
    if (!setup) return [];
    const stated = launched(fileName, setup, files);
    return plan ? compareSetup('hf-trainer-recipe', text, stated, plan) : setupNotes('hf-trainer-recipe', stated);
  },
  readSetup: readRecipe,
};
