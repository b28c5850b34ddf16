/**
 * TF.js frontend: TypeScript / JavaScript source → ModelSpecs, via the
 * TypeScript compiler's parser and a bounded evaluator (./evaluator). The
 * user's code is read, never run.
 *
 * Every `tf.sequential(...)` / `tf.model(...)` the evaluator reaches is a
 * model, named after the function that returns it or the variable it is
 * assigned to. Functions nobody calls in the file are still evaluated (with
 * unknown arguments) when they build a model: `export function createModel()`.
 *
 * Layer names follow TF.js itself: an explicit `name`, else
 * `snake_case(Class) + '_' + Class + n` with n counted per class in
 * construction order (`conv2d_Conv2D1`, `dense_Dense2`), see ./values.
 */
import * as ts from 'typescript';
import type { Diagnostic, FrontendResult } from '../../core/ir';
import { Evaluator } from './evaluator';
import { buildModelSpecs } from './models';
import { TfjsApi } from './tfjsApi';
import { Env, TfPath } from './values';

function scriptKindOf(fileName: string): ts.ScriptKind {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (lower.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.(js|mjs|cjs)$/.test(lower)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

/** Syntax errors the parser recovered from: it still returns a tree, so we keep the partial graph. */
function parseDiagnostics(sf: ts.SourceFile): Diagnostic[] {
  const raw = (sf as unknown as { parseDiagnostics?: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
  return raw.map((d) => {
    const start = sf.getLineAndCharacterOfPosition(d.start);
    const end = sf.getLineAndCharacterOfPosition(d.start + (d.length ?? 0));
    return {
      severity: 'error' as const,
      message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
      line: start.line + 1,
      column: start.character + 1,
      endLine: end.line + 1,
      endColumn: end.character + 1,
      code: 'parse-error',
    };
  });
}

/**
 * The last syntax tree per file. The editor re-analyses on every keystroke; an
 * incremental reparse of one edit reuses the untouched nodes instead of
 * scanning 2,000 lines again. Trees are never handed out, so reuse is safe.
 */
const treeCache = new Map<string, ts.SourceFile>();
const TREE_CACHE_SIZE = 8;

function sourceFileFor(fileName: string, text: string): ts.SourceFile {
  const old = treeCache.get(fileName);
  let sf: ts.SourceFile;
  if (old && old.text === text) sf = old;
  else if (old) {
    const oldText = old.text;
    const max = Math.min(oldText.length, text.length);
    let prefix = 0;
    while (prefix < max && oldText.charCodeAt(prefix) === text.charCodeAt(prefix)) prefix++;
    let suffix = 0;
    while (suffix < max - prefix && oldText.charCodeAt(oldText.length - 1 - suffix) === text.charCodeAt(text.length - 1 - suffix)) suffix++;
    const change = ts.createTextChangeRange(ts.createTextSpan(prefix, oldText.length - prefix - suffix), text.length - prefix - suffix);
    sf = ts.updateSourceFile(old, text, change);
  } else {
    sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, scriptKindOf(fileName));
  }
  treeCache.delete(fileName);
  treeCache.set(fileName, sf);
  if (treeCache.size > TREE_CACHE_SIZE) treeCache.delete(treeCache.keys().next().value!);
  return sf;
}

export function parseScriptSource(fileName: string, text: string): FrontendResult {
  const diagnostics: Diagnostic[] = [];
  try {
    const sf = sourceFileFor(fileName, text);
    diagnostics.push(...parseDiagnostics(sf));
    const api = new TfjsApi(sf);
    const evaluator = new Evaluator(sf, api);
    const globals = new Env();
    // Script-tag and CommonJS code uses a global `tf`; an import or require rebinds it.
    globals.declare('tf', new TfPath([]));
    evaluator.run(globals);
    if (evaluator.budgetHit) {
      diagnostics.push({ severity: 'warning', message: 'stopped following this file after too many evaluation steps; models may be partial', line: 1, column: 1, code: 'eval-limit' });
    }
    if (evaluator.internalError !== undefined) {
      diagnostics.push({ severity: 'error', message: `internal error while reading TF.js model code: ${evaluator.internalError}`, line: 1, column: 1, code: 'internal-error' });
    }
    return { framework: 'tfjs', models: buildModelSpecs(api.models, sf), diagnostics };
  } catch (err) {
    diagnostics.push({ severity: 'error', message: `internal error reading TF.js model: ${err instanceof Error ? err.message : String(err)}`, line: 1, column: 1, code: 'internal-error' });
    return { framework: 'tfjs', models: [], diagnostics };
  }
}
