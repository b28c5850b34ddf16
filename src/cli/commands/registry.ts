/** Subcommand registry. Each room adds its command here with one import and one entry. */
export interface CliCommand {
  summary: string;
  /** Returns the exit code; throws CliError for one-line input errors. */
  run(args: string[]): Promise<number>;
}

export const commands: Record<string, CliCommand> = {};
