/**
 * A plain PyTorch training script as a training config: the loop that wraps its model itself
 * (`FullyShardedDataParallel(…)`, FSDP2's `fully_shard(…)`, `DistributedDataParallel(…)` with or without
 * `ZeroRedundancyOptimizer`), with its autocast, activation checkpointing and DataLoader, read with torch's
 * semantics (torchScriptSetup.ts) and compared with the plan; the fix writes the plan's values into the keyword
 * arguments where that is mechanical. A script built on a framework that wraps the model from its own config
 * (Lightning's or transformers' Trainer, accelerate, Fabric, DeepSpeed) is that framework's, not this reader's.
 * The GPU count comes from the launch script that runs the script (launchedBy.ts).
 */
import { withLaunchedWorld } from './launchedBy';
import { withPythonTree } from './python';
import { compareSetup, setupNotes } from './setup';
import { wrapsModelItself } from './torchNames';
import { readTorchScriptSetup } from './torchScriptSetup';
import type { ConfigReader } from './types';

export const torchScriptReader: ConfigReader = {
  format: 'torch-script',
  detect(fileName, text) {
    return /\.py$/i.test(fileName) && wrapsModelItself(text);
  },
  check(fileName, text, plan, files) {
    return withPythonTree(text, (root) => {
      const read = readTorchScriptSetup(text, root, true);
      if (!read) return [];
      const stated = withLaunchedWorld(fileName, read, files);
      return plan ? compareSetup('torch-script', text, stated, plan) : setupNotes('torch-script', stated);
    });
  },
  readSetup(_fileName, text) {
    return withPythonTree(text, (root) => readTorchScriptSetup(text, root, false));
  },
};
