/** An expected failure (bad flag, unreadable file, no model): printed as one line, exit 2. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
  }
}
