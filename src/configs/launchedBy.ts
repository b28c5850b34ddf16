/**
 * A training script that configures itself in code (`TrainingArguments(...)`, a Lightning `Trainer` without
 * `devices=`) trains on as many GPUs as the launch script that runs it starts: `torchrun --nproc_per_node 8
 * train.py` in run.sh beside it. Without this, "your config" for such a script left the GPU count to the search,
 * and compared the user's setup at a count they do not run.
 *
 * The launch scripts looked at are those in the script's folder and the folder above it (a `scripts/` folder
 * launching `../train.py`, a project root launching `src/train.py`); a command counts when its script word names
 * this file from the launch script's folder. When the scripts that run it disagree, or none says a count, the
 * GPU count stays the search's.
 */
import { baseOf, dirOf, joinPath } from './filePaths';
import { isLaunchScriptName } from './launchScripts';
import { launchWorld } from './launchWorld';
import { scriptLaunch } from './modelFor';
import type { StatedSetup } from './setup';
import { findAssignments, isMakefileName, splitCommands, unquote } from './shellWords';
import type { FileAccess } from './types';

/** `a/./b`, `a/x/../b` → `a/b`: script words are written relative to the launch script's folder. */
function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split(/[\\/]/)) {
    if (part === '.' || (part === '' && out.length > 0)) continue;
    if (part === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(part);
  }
  return out.join('/');
}

/** The GPU counts the launch scripts beside `scriptPath` (or a folder up) start it with, by launch script. */
export function launchCounts(scriptPath: string, files: FileAccess): Array<{ launcher: string; world: number | undefined }> {
  const target = normalise(scriptPath);
  const name = baseOf(scriptPath);
  const dirs = [dirOf(scriptPath), dirOf(dirOf(scriptPath))].filter((d, i, all) => all.indexOf(d) === i);
  const out: Array<{ launcher: string; world: number | undefined }> = [];
  for (const dir of dirs) {
    for (const entry of files.list(dir)) {
      const path = joinPath(dir, entry);
      const text = path === scriptPath ? undefined : files.read(path);
      // Cheap before parsing: a launch script that does not even name the file.
      if (text === undefined || !text.includes(name) || !isLaunchScriptName(path, text)) continue;
      const commands = splitCommands(text);
      const assignments = findAssignments(text, commands, isMakefileName(path));
      for (const words of commands) {
        const launch = scriptLaunch(words);
        if (!launch) continue;
        const script = unquote(words[launch.script]!.raw, 0).value;
        if (normalise(joinPath(dir, script)) !== target) continue;
        out.push({ launcher: entry, world: launchWorld(words, launch.launcher, launch.script, assignments) });
      }
    }
  }
  return out;
}

/** The setup with the GPU count of the launch scripts that run it, when it states none and they agree on one. */
export function withLaunchedWorld(scriptPath: string, stated: StatedSetup, files: FileAccess | undefined): StatedSetup {
  if (stated.world !== undefined || !files || !/\.py$/i.test(scriptPath)) return stated;
  const counts = launchCounts(scriptPath, files);
  const worlds = new Set(counts.map((c) => c.world));
  const [world] = worlds;
  if (worlds.size !== 1 || world === undefined) return stated;
  return { ...stated, world, worldFrom: counts[0]!.launcher };
}
