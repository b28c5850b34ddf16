/**
 * The Python model frontend: reads PyTorch and Keras models from source text
 * without executing it. `initPythonFrontend()` loads the grammar once; after
 * that `parsePythonSource` is synchronous and never throws.
 */
import type { Parser } from 'web-tree-sitter';
import type { FrontendResult } from '../../core/ir';
import { convertTree } from './ast';
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
    const tree = parser.parse(text);
    if (!tree) throw new Error('tree-sitter returned no tree');
    try {
      return readModels(convertTree(tree, text));
    } finally {
      tree.delete();
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      framework: 'pytorch',
      models: [],
      diagnostics: [{ severity: 'error', message: `Could not read ${fileName}: internal error (${message})`, line: 1, column: 1, code: 'internal-error' }],
    };
  }
}
