/**
 * The Python model frontend: reads PyTorch and Keras models from source text
 * without executing it. `initPythonFrontend()` loads the grammar once; after
 * that `parsePythonSource` is synchronous and never throws. It keeps the last
 * syntax tree per file name, so re-reading a file after an edit re-parses
 * only what changed.
 */
import type { Parser } from 'web-tree-sitter';
import type { FrontendResult } from '../../core/ir';
import { forgetIncremental, parseIncrementally } from './incremental';
import { readModels } from './models';
import { createPythonParser } from './treeSitter';

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

export function initPythonFrontend(): Promise<void> {
  loading ??= createPythonParser().then((p) => {
    parser = p;
  });
  return loading;
}

export function parsePythonSource(fileName: string, text: string): FrontendResult {
  if (!parser) {
    return {
      framework: 'pytorch',
      models: [],
      diagnostics: [{ severity: 'error', message: 'Python frontend used before initPythonFrontend() finished', line: 1, column: 1, code: 'not-initialised' }],
    };
  }
  try {
    return readModels(parseIncrementally(parser, fileName, text), fileName);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      framework: 'pytorch',
      models: [],
      diagnostics: [{ severity: 'error', message: `Could not read ${fileName}: internal error (${message})`, line: 1, column: 1, code: 'internal-error' }],
    };
  }
}

/** Releases the syntax tree kept for a file (call when the editor closes it). */
export function forgetPythonSource(fileName: string): void {
  forgetIncremental(fileName);
}
