/**
 * Files a config or a launch script names (a launched script, a DeepSpeed JSON, run.sh beside a model), read as the
 * import room reads sources: only a regular file of source size, since the path is the user's text and `/dev/zero`
 * or a FIFO would never finish reading.
 */
import { readdirSync } from 'node:fs';
import { readSource } from '../frontends/imports/sourceFiles';

export function readOrUndefined(path: string): string | undefined {
  const read = readSource(path);
  return 'why' in read ? undefined : read.text;
}

export function listOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
