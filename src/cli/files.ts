/** Reading and writing the files a command names, with one-line errors (CliError, exit 2). */
import { readFileSync, writeFileSync } from 'node:fs';
import { CliError } from './cliError';

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
