/**
 * An axolotl config seen as the Trainer's arguments (an ArgumentSource, trainerArgumentSetup.ts), because axolotl
 * builds TrainingArguments from it and the values mean what the Trainer makes of them:
 * - `micro_batch_size` is per_device_train_batch_size (the caller applies axolotl's default, 1, not the Trainer's 8);
 * - `bf16: auto`, axolotl's default when bf16 is absent, becomes bf16 on a GPU that supports it and fp16 elsewhere
 *   (resolve_dtype): the run decides, so it reads as a value the run chooses and states no precision; `fp16: true`
 *   beside it turns auto off, as axolotl does;
 * - `gradient_checkpointing: offload | offload_disk` still checkpoints every layer (full recompute) and moves the
 *   checkpoints off the GPU, which the caller says;
 * - `fsdp: [full_shard, auto_wrap]` are the Trainer's words, and axolotl's `fsdp_config` adds what the Trainer's
 *   words would say: `fsdp_offload_params` (axolotl sets FSDP_OFFLOAD_PARAMS itself), a `fsdp_sharding_strategy`
 *   where the words name none, and FSDP2 configs (`fsdp_version: 2`) with no words at all, whose
 *   `reshard_after_forward: false` keeps the parameters gathered after the forward (ZeRO-2).
 * Names it shares with the Trainer (gradient_accumulation_steps, deepspeed, tf32) are the recipe's own.
 */
import type { TreeValue } from './configTree';
import { given, recipeArguments, type RecipeDoc } from './recipeSource';
import type { ArgumentSource, FsdpArgument } from './trainerArgumentSetup';
import type { TrainerFlag } from './trainingArguments';
import type { TextRange } from './types';

/** The Trainer's argument names axolotl writes under its own. */
const OWN_NAMES: Record<string, string> = { per_device_train_batch_size: 'micro_batch_size' };

/** gradient_checkpointing values that checkpoint every layer and offload what they keep. */
export const OFFLOADED_CHECKPOINTS = new Set(['offload', 'offload_disk']);

/** A key of `fsdp_config`, written with axolotl's `fsdp_` prefix (FSDP1 configs) or without it (FSDP2 configs). */
function fsdpConfigKey(config: TreeValue | undefined, name: string): TreeValue | undefined {
  if (config?.kind !== 'map') return undefined;
  const v = config.get(`fsdp_${name}`) ?? config.get(name);
  return v && v.kind !== 'none' ? v : undefined;
}

/** FSDP's sharding words by torch's ShardingStrategy member, as accelerate's fsdp_sharding_strategy names them. */
const WORD_OF_STRATEGY: Record<string, string> = { FULL_SHARD: 'full_shard', SHARD_GRAD_OP: 'shard_grad_op', NO_SHARD: 'no_shard', HYBRID_SHARD: 'hybrid_shard', _HYBRID_SHARD_ZERO2: 'hybrid_shard_zero2' };
const SHARDING_WORDS = new Set(Object.values(WORD_OF_STRATEGY));

/**
 * FSDP as the words and fsdp_config say it together. What fsdp_config holds is written there, nested, which the
 * recipe's top-level edits cannot do: a plan that changes it gets no mechanical fix.
 */
function axolotlFsdp(doc: RecipeDoc, words: FsdpArgument | undefined): FsdpArgument | undefined {
  const config = given(doc, 'fsdp_config');
  const version = given(doc, 'fsdp_version')?.value ?? fsdpConfigKey(config, 'version')?.value;
  const fsdp2Alone = !words?.stated && config?.kind === 'map' && (version === 2 || version === '2');
  if (!words || (!words.stated && !fsdp2Alone)) return words;
  const offloadKey = fsdpConfigKey(config, 'offload_params');
  if (offloadKey && offloadKey.kind !== 'bool') return undefined; // "true" as a string: the run's reading
  const configOffload = offloadKey?.value === true;
  const strategy = fsdpConfigKey(config, 'sharding_strategy');
  const strategyWord = strategy?.kind === 'string' ? WORD_OF_STRATEGY[String(strategy.value).toUpperCase()] : undefined;
  const reshard = fsdpConfigKey(config, 'reshard_after_forward');
  let sharding = words.words.find((w) => SHARDING_WORDS.has(w)) ?? strategyWord;
  if (fsdp2Alone) sharding = reshard?.kind === 'bool' && reshard.value === false ? 'shard_grad_op' : sharding ?? 'full_shard';
  const fromConfig = !words.words.some((w) => SHARDING_WORDS.has(w)) && sharding !== undefined;
  const read = [...(sharding && fromConfig ? [sharding] : []), ...words.words, ...(configOffload && !words.words.includes('offload') ? ['offload'] : [])];
  const range: TextRange | undefined = words.range ?? config?.range;
  return {
    words: read, stated: true, range,
    write: (next) => {
      const nextSharding = next.find((w) => SHARDING_WORDS.has(w));
      // A sharding strategy or offload that fsdp_config states, changed by the plan: nested, not written here.
      if (fsdp2Alone || (fromConfig && nextSharding !== sharding) || (configOffload && !next.includes('offload'))) return undefined;
      const listed = next.filter((w) => !(fromConfig && w === sharding) && !(configOffload && w === 'offload'));
      return words.write(listed);
    },
  };
}

/** `bf16` as axolotl resolves it: absent or "auto" is the run's choice unless `fp16: true` turns it off. */
function axolotlBool(doc: RecipeDoc, base: ArgumentSource, name: string): TrainerFlag {
  if (name === 'bf16') {
    const v = given(doc, 'bf16');
    if (!v || (v.kind === 'string' && v.value === 'auto')) return base.bool('fp16') === true ? false : 'run';
  }
  if (name === 'gradient_checkpointing') {
    const v = given(doc, name);
    if (v?.kind === 'string' && OFFLOADED_CHECKPOINTS.has(v.value as string)) return true;
  }
  return base.bool(OWN_NAMES[name] ?? name);
}

/** The axolotl config as the Trainer's arguments: every argument it leaves out takes axolotl's or the Trainer's default. */
export function axolotlArguments(doc: RecipeDoc, anchor: TextRange): ArgumentSource {
  const base = recipeArguments(doc, anchor);
  const own = (name: string): string => OWN_NAMES[name] ?? name;
  return {
    ...base,
    where: 'in an axolotl config',
    has: (name) => base.has(own(name)),
    bool: (name) => axolotlBool(doc, base, name),
    count: (name) => base.count(own(name)),
    nameRange: (name) => base.nameRange(own(name)),
    valueRange: (name) => base.valueRange(own(name)),
    fsdp: () => axolotlFsdp(doc, base.fsdp()),
    setBool: (name, on) => (axolotlBool(doc, base, name) === on ? [] : doc.set(own(name), on)),
    setNumber: (name, n) => base.setNumber(own(name), n),
    rename: (from, to) => base.rename(own(from), own(to)),
  };
}
