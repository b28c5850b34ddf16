/**
 * Whether a YAML or JSON file is a recipe of the Trainer's arguments, cheaply (no parse). Its top-level keys say:
 * `per_device_train_batch_size` is the Trainer's alone; `gradient_accumulation_steps` and `output_dir` count beside
 * one of its flags (bf16, fp16, gradient_checkpointing). What other tools write with such keys stays theirs:
 * accelerate configs (distributed_type, num_processes: accelerate.ts), DeepSpeed JSON (which has
 * gradient_accumulation_steps and bf16 too: deepspeed.ts), axolotl (base_model, micro_batch_size: its own names for
 * the same arguments, read as their own format by axolotl.ts) and Hydra configs (a `defaults:` list composes them
 * from other files).
 */

/** A top-level YAML key: at the start of a line, quoted or not. */
const yamlKey = (names: string): RegExp => new RegExp(`^["']?(${names})["']?[ \\t]*:`, 'm');
const jsonKey = (names: string): RegExp => new RegExp(`"(${names})"\\s*:`);

const TRAINER_ONLY = 'per_device_train_batch_size';
const BESIDE_A_FLAG = 'gradient_accumulation_steps|output_dir';
const FLAGS = 'bf16|fp16|gradient_checkpointing';
const ACCELERATE = /^[ \t]*(distributed_type|num_processes)[ \t]*:/m;
const NOT_A_RECIPE = [ACCELERATE, yamlKey('base_model|micro_batch_size|defaults')];

/** The keys no DeepSpeed JSON has, which make a JSON file a Trainer recipe however much DeepSpeed it holds inline. */
export const namesTrainerArguments = (json: string): boolean => jsonKey(`${TRAINER_ONLY}|output_dir`).test(json);

export function isTrainerRecipe(fileName: string, text: string): boolean {
  if (/\.ya?ml$/i.test(fileName)) {
    return (yamlKey(TRAINER_ONLY).test(text) || (yamlKey(BESIDE_A_FLAG).test(text) && yamlKey(FLAGS).test(text))) && !NOT_A_RECIPE.some((re) => re.test(text));
  }
  // gradient_accumulation_steps beside bf16 is a DeepSpeed JSON too: only the Trainer's own names count.
  return /\.json$/i.test(fileName) && (jsonKey(TRAINER_ONLY).test(text) || (jsonKey('output_dir').test(text) && jsonKey(FLAGS).test(text)));
}

/** The keys that made the file a recipe, of which at least one must be top-level once it is parsed. */
export const RECIPE_KEYS = ['per_device_train_batch_size', 'gradient_accumulation_steps', 'output_dir'];

/**
 * An axolotl config (`axolotl train config.yml`): a YAML file naming its model as `base_model` beside one of the
 * batch keys axolotl requires (it refuses a config with fewer than two of micro_batch_size, gradient_accumulation_steps
 * and batch_size), or `micro_batch_size` beside axolotl's own `sequence_len`. Hydra's composed configs and accelerate's
 * stay theirs.
 */
export function isAxolotlConfig(fileName: string, text: string): boolean {
  if (!/\.ya?ml$/i.test(fileName) || ACCELERATE.test(text) || yamlKey('defaults').test(text)) return false;
  return (yamlKey('base_model').test(text) && yamlKey('micro_batch_size|gradient_accumulation_steps|batch_size').test(text))
    || (yamlKey('micro_batch_size').test(text) && yamlKey('sequence_len').test(text));
}
