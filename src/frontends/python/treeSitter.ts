/**
 * Loads web-tree-sitter and the tree-sitter-python grammar from local wasm
 * files (never the network). Shared by the model frontend and the config
 * readers (Lightning / Keras strategy calls in Python).
 *
 * The wasm files sit beside the bundle in dist/ (copied by scripts/build.mjs);
 * when running from sources (tests via tsx) they come from node_modules.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

let loading: Promise<Language> | undefined;

function findWasm(file: string, packageDir: string): string {
  const candidates = [
    join(__dirname, file),
    resolve(__dirname, '..', 'dist', file),
    resolve(__dirname, '..', '..', '..', 'dist', file),
    resolve(__dirname, '..', '..', '..', 'node_modules', packageDir, file),
    resolve(process.cwd(), 'node_modules', packageDir, file),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`WAP: cannot find ${file}; looked in ${candidates.map((c) => dirname(c)).join(', ')}`);
  return found;
}

/** Loads the Python grammar once per process. */
export function loadPythonLanguage(): Promise<Language> {
  loading ??= (async () => {
    const runtimeWasm = findWasm('web-tree-sitter.wasm', 'web-tree-sitter');
    await Parser.init({ locateFile: () => runtimeWasm });
    return Language.load(findWasm('tree-sitter-python.wasm', 'tree-sitter-python'));
  })();
  return loading;
}

/** A fresh parser for Python. Parsers are cheap; the language is loaded once. */
export async function createPythonParser(): Promise<Parser> {
  const language = await loadPythonLanguage();
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
