/**
 * `wap` — the headless CLI. Each subcommand lives in its own module under
 * ./commands and is registered in ./commands/registry.ts.
 * Exit codes: 0 success (warnings allowed), 1 findings (e.g. `wap config`
 * mismatches), 2 usage or input error with a one-line message.
 */
import { commands } from './commands/registry';
import { CliError, cliErrorJson } from './cliError';

const usage = `wap — workload-aware parallelizer

Usage: wap <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(9)} ${c.summary}`)
  .join('\n')}

Run 'wap <command> --help' for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    console.log(process.env.WAP_VERSION ?? '0.1.0');
    return 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`wap: unknown command '${name}'. Commands: ${Object.keys(commands).join(', ')}`);
    return 2;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // One line for expected input errors; a stack only for real bugs.
    // Under --json stdout always carries a JSON object, with the file's diagnostics when there are any.
    if (process.argv.includes('--json')) {
      const asCli = err instanceof CliError ? err : new CliError(`internal error: ${err instanceof Error ? err.message : String(err)}`);
      console.log(JSON.stringify(cliErrorJson(asCli), null, 2));
    }
    if (err instanceof CliError) console.error(`wap: ${err.message}`);
    else console.error(`wap: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 2;
  },
);
