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
import type { ConfigFormat, ConfigReader, FileAccess, TextRange } from './types';

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

/**
 * The model a recipe names (`model_name_or_path: org/name` or a folder; axolotl's `base_model`), as written; undefined
 * when it names none.
 */
export function recipeModelReference(fileName: string, text: string, key = 'model_name_or_path'): { ref: string; key: string } | undefined {
  let doc: RecipeDoc;
  try {
    doc = /\.json$/i.test(fileName) ? jsonRecipe(text) : yamlRecipe(text);
  } catch {
    // A recipe that does not parse names no model; its check says why (malformed-config).
    return undefined;
  }
  const v = doc.top.get(key);
  return v?.kind === 'string' && typeof v.value === 'string' && v.value.trim() !== '' ? { ref: v.value.trim(), key: doc.keyword(key) } : undefined;
}

/**
 * With the DeepSpeed JSON it names and the GPUs its launch scripts start: every GPU a data-parallel replica (the
 * Trainer has no model-parallel degree), so the global batch is the one the run trains with. axolotl's configs too.
 */
export function launchedRecipe(fileName: string, setup: StatedSetup, files: FileAccess | undefined): StatedSetup {
  const stated = withLaunchedWorld(fileName, withLinkedConfig(fileName, setup, files), files, 'argument');
  return stated.world === undefined ? stated : { ...stated, dataParallel: { value: stated.world, stated: true, range: stated.anchor } };
}

/** A reader of files a launch passes to a script (recipes, axolotl configs): read, then linked and launched. */
export function passedConfigReader(format: ConfigFormat, detect: ConfigReader['detect'], read: (fileName: string, text: string) => StatedSetup | undefined): ConfigReader {
  return {
    format,
    launchedAs: 'argument',
    detect,
    check(fileName, text, plan, files) {
      const setup = read(fileName, text);
      if (!setup) return [];
      const stated = launchedRecipe(fileName, setup, files);
      return plan ? compareSetup(format, text, stated, plan) : setupNotes(format, stated);
    },
    readSetup: read,
  };
}

export const trainerRecipeReader: ConfigReader = passedConfigReader('hf-trainer-recipe', isTrainerRecipe, readRecipe);
