/**
 * The tokens per sample a training run states on its command line, read from the option that holds it by the
 * names the training stacks give it (core/sequenceOptions.ts). A Hugging Face model read without it is planned at
 * its config's max_position_embeddings (131,072 tokens for Qwen2), however short the run's samples are. The first
 * such option a parse reads with a whole-number value counts (core/inputs.ts applies it below `--seq-len`), named
 * with where it came from.
 */
import type { ModelSpec } from '../../core/ir';
import { SEQUENCE_LENGTH_NAMES } from '../../core/sequenceOptions';
import type { Interp } from './interpreter';
import { fileLabel } from './runFacts';
import type { Value } from './values';

/**
 * Records the run's sequence length when `name` is a sequence-length option with a whole value: `givenBy` names the
 * command line that gave it (run.sh, --script-args), undefined for the script's own default.
 */
export function noteRunSequence(interp: Interp, name: string, value: Value, givenBy: string | undefined): void {
  if (interp.run.sequence || !SEQUENCE_LENGTH_NAMES.has(name) || value.k !== 'num' || value.float || value.v < 1) return;
  interp.run.sequence = { tokens: value.v, source: givenBy ? `${name} ${value.v} from ${givenBy}` : `${name}'s default ${value.v} in the script` };
}

/**
 * A training script's own module-level length (nanoGPT's `block_size`, after its configurator ran with the run's
 * arguments), where no parse stated one: the script samples its batches at it. Failing that, its batch budget's.
 */
export function noteModuleSequence(interp: Interp): void {
  if (interp.run.sequence || interp.trainedModels.length === 0) return;
  const file = fileLabel(interp.file);
  for (const name of SEQUENCE_LENGTH_NAMES) {
    const value = interp.globals.vars.get(name);
    if (value?.k !== 'num' || value.float || value.v < 1) continue;
    interp.run.sequence = { tokens: value.v, source: `${name} ${value.v} in ${file}` };
    return;
  }
  // Else the tokens per sample a batch budget divides by (build-nanogpt's `T = 1024`, runTokenBudget.ts).
  interp.run.sequence = interp.run.budget?.sequence;
}

/** The spec with the run's sequence length, when a parse read one. */
export function withRunSequence(interp: Interp, spec: ModelSpec): ModelSpec {
  return interp.run.sequence && !spec.runSequence ? { ...spec, runSequence: interp.run.sequence } : spec;
}
