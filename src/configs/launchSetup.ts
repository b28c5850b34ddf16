/**
 * "your config" for a launch script that states nothing but how many processes it starts: `torchrun
 * --nproc_per_node 8 train.py` of a plain DDP script runs the script's own setup (its DDP or FSDP wrap, precision,
 * batch) on this launch's processes. The setup is only compared, never edited through: its edits would be the
 * script's, so none are kept, and it points at the script's name in the launch.
 */
import { baseOf, joinPath, normalisePath } from './filePaths';
import { launchesOf } from './launchedBy';
import { launchedCommands, locateLaunchedScript } from './launchTargets';
import type { SetupDim, StatedSetup } from './setup';
import type { FileAccess } from './types';

type SetupReader = (fileName: string, text: string, files?: FileAccess) => StatedSetup[];

/** A dimension as a value to compare: without the edit that would write it into the script. */
function valueOnly(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('value' in value) || !('range' in value)) return value;
  const { set: _set, ...rest } = value as SetupDim<unknown>;
  return rest;
}

/** The setup the launch `fileName` runs, when it launches a script that states one, on the process count it states (if any). */
export function launchedScriptSetup(fileName: string, text: string, files: FileAccess, readSetups: SetupReader): StatedSetup | undefined {
  const self = normalisePath(fileName);
  for (const command of launchedCommands(fileName, text)) {
    const path = locateLaunchedScript(fileName, command, files)?.file;
    if (!path || normalisePath(path) === self) continue;
    const body = files.read(path);
    if (body === undefined) continue;
    const worlds = new Set(launchesOf(path, files).filter((l) => normalisePath(joinPath(l.dir, l.launcher)) === self).map((l) => l.world));
    const [world] = worlds;
    // A count the launch does not state as a number (deepspeed without --num_gpus, torchrun's `gpu`) is counted on
    // the plan's machines later (launchWorldSetup.ts); the script's own setup is kept for it.
    if (worlds.size !== 1) continue;
    const [setup] = readSetups(path, body, files);
    if (!setup) continue;
    const { writeAll: _writeAll, link: _link, conflicts: _conflicts, ...stated } = setup;
    const values = Object.fromEntries(Object.entries(stated).map(([key, value]) => [key, valueOnly(value)])) as unknown as StatedSetup;
    // Anchored where the launch names its script (`train.py`, or `-m scripts.base_train`'s module).
    return { ...values, ...(world !== undefined ? { world, worldFrom: baseOf(fileName) } : {}), anchor: command.at, label: `${setup.label} (${baseOf(path)})` };
  }
  return undefined;
}
