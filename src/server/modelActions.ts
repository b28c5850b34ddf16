/**
 * Code actions on a model file: the remedies found for a model that does not
 * fit, each one a click (a setting written by the client, or a command), so no
 * advice ever asks the user to type a CLI flag.
 */
import { CodeActionKind, type CodeAction, type Diagnostic, type Range } from 'vscode-languageserver';
import { ClientActionCommands } from '../protocol/commands';
import { modelNameRange } from './diagnostics';
import type { ModelDocument } from './modelDocs';

function overlaps(a: Range, b: Range): boolean {
  return !(a.end.line < b.start.line || b.end.line < a.start.line);
}

export function modelCodeActions(doc: ModelDocument, range: Range, diagnostics: Diagnostic[], clientCommands: boolean): CodeAction[] {
  // The remedies run client commands (settings, the cluster picker): other editors get the diagnostic text only.
  if (!clientCommands) return [];
  const actions: CodeAction[] = [];
  for (const model of doc.models) {
    const entry = doc.plans.get(model.name);
    if (!entry || entry.outcome.feasible || !entry.remedies) continue;
    const where = modelNameRange(model);
    if (!overlaps(where, range)) continue;
    const diagnostic = diagnostics.find((d) => d.code === 'plan-infeasible' && d.range.start.line === where.start.line);
    entry.remedies.forEach((r, i) => {
      const command = r.setting
        ? { title: r.title, command: ClientActionCommands.applySetting, arguments: [r.setting.key, r.setting.value, doc.uri] }
        : { title: r.title, command: r.command!, arguments: [] };
      actions.push({ title: r.title, kind: CodeActionKind.QuickFix, isPreferred: i === 0, command, ...(diagnostic ? { diagnostics: [diagnostic] } : {}) });
    });
  }
  return actions;
}
