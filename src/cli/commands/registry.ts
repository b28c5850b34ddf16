/** Subcommand registry. Each room adds its command here with one import and one entry. */
import { analyzeCommand } from './analyze';
import { planCommand } from './plan';
import { configCommand } from './config';
import { exportCommand } from './export';
import { profileCommand } from './profile';
import { validateCommand } from './validate';
export interface CliCommand {
  summary: string;
  /** Returns the exit code; throws CliError for one-line input errors. */
  run(args: string[]): Promise<number>;
}

export const commands: Record<string, CliCommand> = {
  analyze: analyzeCommand,
  plan: planCommand,
  config: configCommand,
  export: exportCommand,
  profile: profileCommand,
  validate: validateCommand,
};
