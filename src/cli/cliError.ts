import type { Diagnostic } from '../core/ir';

/** An expected failure (bad flag, unreadable file, no model): printed as one line, exit 2. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
    /** What the frontend said about the file (why no model was found), for `--json`. */
    readonly details?: { file?: string; diagnostics: Diagnostic[] },
  ) {
    super(message);
  }
}

/** The JSON a `--json` command prints when it fails: never nothing, always the diagnostics. */
export function cliErrorJson(err: CliError): unknown {
  const given = err.details?.diagnostics ?? [];
  // The failure itself is a diagnostic too, so a reader of `diagnostics` alone sees why nothing came back.
  const own: Diagnostic = { severity: 'error', message: err.message, line: 1, column: 1, code: err.details ? 'no-model' : 'cli-error' };
  return {
    ...(err.details?.file !== undefined ? { file: err.details.file } : {}),
    error: err.message,
    models: [],
    diagnostics: [own, ...given].map((d) => ({
      severity: d.severity,
      message: d.message,
      line: d.line,
      column: d.column,
      ...(d.endLine !== undefined ? { endLine: d.endLine, endColumn: d.endColumn } : {}),
      ...(d.code ? { code: d.code } : {}),
    })),
  };
}
