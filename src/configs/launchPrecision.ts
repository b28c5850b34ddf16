/**
 * The precision a launch script beside the model starts it in: `accelerate launch --mixed_precision bf16 train.py`
 * (accelerate's launch flag, which beats the accelerate config's `mixed_precision` and a Trainer that sets neither
 * bf16 nor fp16, but not code that states its own: `Accelerator(mixed_precision=…)` or `TrainingArguments(bf16=True)`
 * set it before the launch's environment variable is read). A command counts when its script is one of the Python
 * files that speak for the model, named from the launch script's folder; when those commands disagree, or one gives
 * no flag, the run's precision is not one WAP can name, and there is no hint.
 */
import { ACCELERATE_PRECISION } from '../core/trainingPrecision';
import { baseOf } from './filePaths';
import { isLaunchScriptName, scriptLaunch } from './launchScripts';
import { launcherSharding, launchMixedPrecision } from './launchWorld';
import type { PrecisionHint } from './precisionHint';
import { expandedCommands } from './shellExpansion';


interface LaunchedPrecision {
  file: string;
  /** As written: 'bf16'; undefined when the command gives no flag. */
  value: string | undefined;
  /** The launcher's own sharding (`--use_deepspeed`, `--config_file`), which decides how 16-bit tensors are held. */
  sharded: boolean;
}

/** The commands of one launch script that run one of `scripts` (Python file names in the launch script's folder). */
function launchedPrecisions(name: string, text: string, scripts: ReadonlySet<string>): LaunchedPrecision[] {
  const { commands, assignments } = expandedCommands(name, text);
  const out: LaunchedPrecision[] = [];
  for (const { words } of commands) {
    const launch = scriptLaunch(words);
    if (!launch) continue;
    const script = launch.path.replace(/^\.\//, '');
    if (script.includes('/') || !scripts.has(baseOf(script))) continue;
    out.push({ file: name, value: launchMixedPrecision(words, launch.launcher, launch.script, assignments), sharded: launcherSharding(words, launch.launcher, launch.script) !== undefined });
  }
  return out;
}

/** The hint every launch of the model's scripts agrees on; undefined when none launches them or they do not agree. */
export function launchPrecisionHint(files: ReadonlyArray<{ name: string; text: string }>, scripts: ReadonlySet<string>): PrecisionHint | undefined {
  const launches = files.filter((f) => isLaunchScriptName(f.name, f.text) && [...scripts].some((s) => f.text.includes(s))).flatMap((f) => launchedPrecisions(f.name, f.text, scripts));
  const values = new Set(launches.map((l) => l.value));
  const [value] = values;
  if (values.size !== 1 || value === undefined) return undefined;
  const precision = ACCELERATE_PRECISION[value.toLowerCase()];
  if (!precision) return undefined;
  const source = `${launches[0]!.file} (accelerate launch --mixed_precision ${value})`;
  // Under a plugin accelerate hands precision to DeepSpeed or FSDP, which hold tensors their own way: no style said.
  if ((precision !== 'fp16' && precision !== 'bf16') || launches.some((l) => l.sharded)) return { precision, source };
  return { precision, source, ampStyle: 'autocast', ampStyleSource: `${source}: accelerate runs forward under torch.autocast` };
}
