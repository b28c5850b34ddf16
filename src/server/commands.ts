/**
 * `workspace/executeCommand` for LSP clients other than VS Code (whose
 * CodeLenses call the extension's own commands): plan a model, summarise its
 * plan, fix a config.
 */
import { ErrorCodes, ResponseError, type CancellationToken, type Connection, type ExecuteCommandParams, type WorkDoneProgressReporter } from 'vscode-languageserver';
import { ServerCommands } from '../protocol/lsp';
import type { PlanReport } from '../protocol/plan';
import { batchText } from '../protocol/setupText';
import type { ConfigDocuments } from './configDocs';
import { describeLayerStrategy, formatMs, planLensTitle } from './format';
import type { RequestHandlers } from './requests';

export async function runServerCommand(
  connection: Connection,
  params: ExecuteCommandParams,
  token: CancellationToken,
  deps: { handlers: RequestHandlers; configs: ConfigDocuments },
): Promise<unknown> {
  const [uri, model] = (params.arguments ?? []) as [unknown, unknown];
  if (typeof uri !== 'string') throw new ResponseError(ErrorCodes.InvalidParams, `wap: ${params.command} needs a document uri as its first argument`);
  const ref = { uri, model: typeof model === 'string' ? model : undefined };
  const progress = await connection.window.createWorkDoneProgress().catch(() => undefined);
  const reporter = endsOnce(progress);
  const cancel = progress ? anyOf(token, progress.token) : token;
  // Every created progress is ended, also when the command fails before its handler begins one (no such model, a bad uri…).
  try {
    return await run(params.command, ref, uri, cancel, reporter, connection, deps);
  } finally {
    reporter.done();
  }
}

async function run(
  command: string,
  ref: { uri: string; model: string | undefined },
  uri: string,
  cancel: CancellationToken,
  reporter: WorkDoneProgressReporter,
  connection: Connection,
  deps: { handlers: RequestHandlers; configs: ConfigDocuments },
): Promise<unknown> {
  switch (command) {
    case ServerCommands.parallelizeModel: {
      const enabled = await deps.handlers.profileEnabled(uri);
      if (enabled) return deps.handlers.profile(ref, cancel, reporter);
      return deps.handlers.plan(ref, cancel, reporter);
    }
    case ServerCommands.planSummary: {
      const result = await deps.handlers.plan({ ...ref, reuse: true }, cancel, reporter);
      return planSummaryMarkdown(result.model, result.outcome);
    }
    case ServerCommands.fixAllConfig: {
      reporter.done();
      await deps.configs.check(uri);
      const edit = await deps.configs.fixAllEdit(uri);
      if (!edit) return { applied: false };
      const r = await connection.workspace.applyEdit({ label: 'Fix all WAP config issues', edit });
      return { applied: r.applied };
    }
    default:
      reporter.done();
      throw new ResponseError(ErrorCodes.MethodNotFound, `wap: unknown command ${command}`);
  }
}

/** The command's progress with an idempotent `done`: the handlers end it in their own `finally`, and so does the command. */
function endsOnce(progress: WorkDoneProgressReporter | undefined): WorkDoneProgressReporter {
  let ended = false;
  return {
    begin: (title, percentage, message, cancellable) => {
      if (!ended) progress?.begin(title, percentage, message, cancellable);
    },
    report: ((a: number | string, b?: string) => {
      if (ended || !progress) return;
      if (typeof a === 'number') progress.report(a, b as string);
      else progress.report(a);
    }) as WorkDoneProgressReporter['report'],
    done: () => {
      if (ended) return;
      ended = true;
      progress?.done();
    },
  };
}

function anyOf(a: CancellationToken, b: CancellationToken): CancellationToken {
  return {
    get isCancellationRequested() {
      return a.isCancellationRequested || b.isCancellationRequested;
    },
    onCancellationRequested: a.onCancellationRequested,
  };
}

/** The plan as Markdown: the panel's stand-in for clients without a webview. */
export function planSummaryMarkdown(model: string, outcome: import('../protocol/plan').PlanOutcome): string {
  if (!outcome.feasible) return `# ${model}\n\n${outcome.reason}`;
  const r: PlanReport = outcome;
  const rows = r.plan.layers.map((l) => `| ${l.line} | ${l.name} | ${l.type} | ${describeLayerStrategy(l)} | ${formatMs(l.forwardMs + l.backwardMs)} |`);
  return [
    `# ${model}: ${planLensTitle(r)}`,
    '',
    `Cluster ${r.cluster.name} (${r.cluster.source}) · ${batchText(r)} · step ${formatMs(r.plan.stepTimeMs)} · ${r.plan.samplesPerSec.toFixed(0)} samples/s`,
    '',
    '| line | layer | type | strategy | fwd+bwd |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
