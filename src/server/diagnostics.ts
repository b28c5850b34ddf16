/** Frontend, analysis and plan findings of a model file → LSP diagnostics. A file with no model gets none. */
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type Diagnostic, type Range } from 'vscode-languageserver';
import type { AnalyzedModel, Diagnostic as WapDiagnostic, Severity } from '../core/ir';
import { remediesSentence } from './remedies';
import type { ModelDocument } from './modelDocs';
import { LINE_END, toLspRange, toLspRangeLoose } from './positions';
import { formatShape } from './format';

export const DIAGNOSTIC_SOURCE = 'wap';

export function lspSeverity(s: Severity | string): DiagnosticSeverity {
  return s === 'error' ? DiagnosticSeverity.Error : s === 'warning' ? DiagnosticSeverity.Warning : DiagnosticSeverity.Information;
}

/**
 * A finding inside an imported module (`d.file`) cannot be drawn at its own
 * line in this document: it is shown at `anchor` (the model, or the top of the
 * file) naming the other file, with a related location that opens it there.
 */
function convertForeign(d: WapDiagnostic, file: string, anchor: Range): Diagnostic {
  const where = toLspRangeLoose(d.line, d.column, d.endLine, d.endColumn);
  return {
    severity: lspSeverity(d.severity),
    range: { start: anchor.start, end: { line: anchor.start.line, character: LINE_END } },
    message: `${basename(file)}:${d.line}: ${d.message}`,
    source: DIAGNOSTIC_SOURCE,
    code: d.code,
    relatedInformation: [{ location: { uri: pathToFileURL(file).href, range: where }, message: d.message }],
  };
}

function convert(d: WapDiagnostic, doc?: ModelDocument, anchor?: Range): Diagnostic {
  if (d.file && doc && d.file !== doc.fileName) return convertForeign(d, d.file, anchor ?? { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } });
  const range = toLspRangeLoose(d.line, d.column, d.endLine, d.endColumn);
  // A notice about a whole model marks its first line, not the whole class body.
  if (d.severity === 'info' && range.end.line > range.start.line) range.end = { line: range.start.line, character: LINE_END };
  return {
    severity: lspSeverity(d.severity),
    range,
    message: d.message,
    source: DIAGNOSTIC_SOURCE,
    code: d.code,
  };
}

export function modelNameRange(model: AnalyzedModel): Range {
  const start = toLspRange(model.range).start;
  return { start, end: { line: start.line, character: LINE_END } };
}

export function modelDiagnostics(doc: ModelDocument): Diagnostic[] {
  const analysis = doc.analysis;
  if (!analysis) return [];
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const push = (d: Diagnostic) => {
    const key = `${d.range.start.line}:${d.range.start.character}:${d.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(d);
  };
  const firstModel = analysis.models[0] ? toLspRange(analysis.models[0].range) : undefined;
  for (const d of analysis.diagnostics) push(convert(d, doc, firstModel));
  for (const model of analysis.models) {
    for (const d of model.diagnostics) push(convert(d, doc, toLspRange(model.range)));
    if (model.inputAssumed && !model.diagnostics.some((d) => d.code === 'assumed-input')) {
      push({
        severity: DiagnosticSeverity.Information,
        range: { start: toLspRange(model.range).start, end: { line: toLspRange(model.range).start.line, character: LINE_END } },
        message: `${model.name}: input shape assumed ${formatShape(model.input)} (not stated in the code); plans use it.`,
        source: DIAGNOSTIC_SOURCE,
        code: 'assumed-input',
      });
    }
    const entry = doc.plans.get(model.name);
    if (!entry) continue;
    // Model-level findings mark the line that names the model, not the whole class or function body.
    const modelRange = modelNameRange(model);
    if (!entry.outcome.feasible) {
      const ways = entry.remedies ? ` ${remediesSentence(entry.remedies)}` : '';
      push({ severity: DiagnosticSeverity.Error, range: modelRange, message: `${model.name} does not fit: ${entry.outcome.reason.replace(/\.$/, '')}.${ways}`, source: DIAGNOSTIC_SOURCE, code: 'plan-infeasible' });
    }
    for (const pd of entry.outcome.diagnostics) {
      // The planner repeats the assumed-input notice the analysis already gave.
      if (model.inputAssumed && /assumed/i.test(pd.message) && !pd.layer) continue;
      // Plan findings point at their layer's current line when the layer still exists.
      const layer = pd.layer ? model.layers.find((l) => l.name === pd.layer) : undefined;
      const range = layer && !layer.range.file ? toLspRange(layer.range) : pd.line && !layer ? toLspRangeLoose(pd.line, 1) : modelRange;
      push({ severity: lspSeverity(pd.severity), range, message: pd.message, source: DIAGNOSTIC_SOURCE, code: 'plan' });
    }
  }
  return out;
}
