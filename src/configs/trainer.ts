/**
 * Hugging Face Trainer: `TrainingArguments(...)` (and trl's SFTConfig and the
 * like) in a training script, compared with the plan like any other training
 * config: precision, FSDP sharding, gradient checkpointing, micro-batch and
 * accumulation (trainerSetup.ts), with quick-fixes that write the plan's
 * values into the call. Arguments written as expressions (args.bf16) are the
 * run's choice and are left alone.
 */
import type { Node } from 'web-tree-sitter';
import { withLaunchedWorld } from './launchedBy';
import { withLinkedConfig } from './linkedConfig';
import { compareSetup, setupNotes, type StatedSetup } from './setup';
import { callArgs, calleeName, malformedIfBroken, withPythonTree } from './python';
import { isTrainingArguments, mentionsTrainingArguments } from './trainingArguments';
import { readTrainerSetup } from './trainerSetup';
import type { ConfigFinding, ConfigReader } from './types';

/** The Trainer-argument calls that always run, with their arguments. */
function trainerCalls(root: Node): Array<{ call: Node; callee: string }> {
  const out: Array<{ call: Node; callee: string }> = [];
  for (const call of root.descendantsOfType('call')) {
    if (call && isTrainingArguments(call)) out.push({ call, callee: calleeName(call) ?? 'TrainingArguments' });
  }
  return out;
}

export const trainerReader: ConfigReader = {
  format: 'hf-trainer',
  detect(fileName, text) {
    return /\.py$/i.test(fileName) && /\b(transformers|trl)\b/.test(text) && mentionsTrainingArguments(text);
  },
  check(fileName, text, plan, files) {
    return withPythonTree(text, (root) => {
      const findings: ConfigFinding[] = [];
      for (const { call, callee } of trainerCalls(root)) {
        malformedIfBroken(call, `${callee}(…)`);
        const args = callArgs(call);
        if (!args) continue;
        const stated = withLaunchedWorld(fileName, withLinkedConfig(fileName, readTrainerSetup(text, args, callee), files), files);
        findings.push(...(plan ? compareSetup('hf-trainer', text, stated, plan) : setupNotes('hf-trainer', stated)));
      }
      return findings;
    });
  },
  readSetup(_fileName, text) {
    return withPythonTree(text, (root): StatedSetup | undefined => {
      for (const { call, callee } of trainerCalls(root)) {
        const args = callArgs(call);
        if (args) return readTrainerSetup(text, args, callee);
      }
      return undefined;
    });
  },
};
