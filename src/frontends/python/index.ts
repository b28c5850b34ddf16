/**
 * The Python model frontend: reads PyTorch and Keras models from source text
 * without executing it. `initPythonFrontend()` loads the grammar once; after
 * that `parsePythonSource` is synchronous and never throws. It keeps the last
 * syntax tree per file name, so re-reading a file after an edit re-parses
 * only what changed.
 */
import { resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import type { AnalyzeOptions, FrontendResult } from '../../core/ir';
import type { ImportOptions } from '../imports';
import { convertTree, type ConvertedTree } from './ast';
import { forgetIncremental, parseIncrementally } from './incremental';
import { readModels } from './models';
import { thrownMessage } from './thrownMessage';
import { createPythonParser } from './treeSitter';

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

export function initPythonFrontend(): Promise<void> {
  loading ??= createPythonParser().then((p) => {
    parser = p;
  });
  return loading;
}

/**
 * Reads the models of a Python file. With `imports`, imports are followed into
 * workspace modules and installed libraries (read statically, never run);
 * without, imported names stay library paths.
 */
export function parsePythonSource(fileName: string, text: string, imports?: ImportOptions, givenInput: AnalyzeOptions = {}): FrontendResult {
  if (!parser) {
    return {
      framework: 'pytorch',
      models: [],
      diagnostics: [{ severity: 'error', message: 'Python frontend used before initPythonFrontend() finished', line: 1, column: 1, code: 'not-initialised' }],
    };
  }
  try {
    const p = parser;
    const context = imports ? { options: imports, parse: (file: string, source: string, version: string) => parseModule(p, file, source, version), mainFile: resolve(fileName) } : undefined;
    return readModels(parseIncrementally(parser, fileName, text), context, fileName, givenInput);
  } catch (e) {
    const message = thrownMessage(e);
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

/** Converted trees of imported modules per file version: a training script re-analysed after an edit re-parses none of them. */
const moduleTrees = new Map<string, { version: string; tree: ConvertedTree }>();
const MAX_MODULE_TREES = 600;

function parseModule(parser: Parser, file: string, text: string, version: string): ConvertedTree {
  const hit = moduleTrees.get(file);
  if (hit && hit.version === version) return hit.tree;
  const tree = parser.parse(text);
  if (!tree) throw new Error(`tree-sitter could not parse ${file}`);
  try {
    const converted = convertTree(tree, text);
    moduleTrees.delete(file);
    if (moduleTrees.size >= MAX_MODULE_TREES) moduleTrees.delete(moduleTrees.keys().next().value as string);
    moduleTrees.set(file, { version, tree: converted });
    return converted;
  } finally {
    tree.delete();
  }
}
