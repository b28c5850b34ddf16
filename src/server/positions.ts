/**
 * The one place where WAP's 1-based lines/columns become LSP's 0-based
 * positions. Columns from the frontends count UTF-16 code units like LSP does,
 * so only the base changes.
 */
import type { Position, Range } from 'vscode-languageserver';
import type { SourceRange } from '../core/ir';

/** A column past any real line end: clients clamp it, marking "to the end of the line". */
export const LINE_END = 100_000;

export function toLspRange(r: SourceRange): Range {
  const startLine = Math.max(0, r.line - 1);
  const endLine = Math.max(startLine, (r.endLine ?? r.line) - 1);
  const start = { line: startLine, character: Math.max(0, r.column - 1) };
  let endCharacter = Math.max(0, (r.endColumn ?? r.column) - 1);
  if (endLine === startLine && endCharacter < start.character) endCharacter = start.character;
  return { start, end: { line: endLine, character: endCharacter } };
}

/** A diagnostic-like location that may lack an end: widen it to the rest of the line. */
export function toLspRangeLoose(line: number, column: number, endLine?: number, endColumn?: number): Range {
  const l = Math.max(0, line - 1);
  const c = Math.max(0, column - 1);
  if (endLine === undefined || endColumn === undefined) return { start: { line: l, character: c }, end: { line: l, character: LINE_END } };
  return toLspRange({ line, column, endLine, endColumn });
}

export function rangeContains(r: Range, p: Position): boolean {
  if (p.line < r.start.line || p.line > r.end.line) return false;
  if (p.line === r.start.line && p.character < r.start.character) return false;
  if (p.line === r.end.line && p.character > r.end.character) return false;
  return true;
}

/** Whole lines a 1-based source range covers, as 0-based LSP lines. */
export function lspLinesOf(r: SourceRange): [number, number] {
  return [Math.max(0, r.line - 1), Math.max(0, (r.endLine ?? r.line) - 1)];
}
