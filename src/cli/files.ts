/** Reading and writing the files a command names, with one-line errors (CliError, exit 2). */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { FileAccess } from '../configs/index';
import { pretrainedConfigPath } from '../frontends/huggingface/sources';
import { readSource } from '../frontends/imports/sourceFiles';
import { CliError } from './cliError';

/** Files as the configs and launch scripts a command reads name them, from disk. */
export const diskFiles: FileAccess = {
  // Where from_pretrained(ref) would find its config.json on disk (a folder, the hub cache), never the network.
  pretrainedConfig: pretrainedConfigPath,
  // Only a regular file of source size: a config may name /dev/zero or a FIFO, which would never finish reading.
  read: (p: string): string | undefined => {
    const read = readSource(p);
    return 'why' in read ? undefined : read.text;
  },
  list: (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

const why = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** `what` ('config file', 'profile') goes into the message; a model file is named by its path alone. */
export function readTextFile(path: string, what?: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what ? `${what} ` : ''}'${path}' (${why(err)})`);
  }
}

/** Runs `write`, which writes `path` (e.g. writeProfile, writeHtmlReport), turning its failure into a one-line error. */
export function writingTo<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw new CliError(`cannot write '${path}' (${why(err)})`);
  }
}

export function writeTextFile(path: string, text: string): void {
  writingTo(path, () => writeFileSync(path, text));
}
