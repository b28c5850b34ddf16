/**
 * Source text → IR. Picks the frontend by file name and content, then runs the
 * core's shape inference and workload. Frontends never import or execute the
 * user's code: they read syntax trees.
 */
import { analyzeModel } from '../core/analyze';
import type { AnalysisResult, AnalyzeOptions, Framework, FrontendResult } from '../core/ir';
import type { ImportOptions } from './imports';
import { initPythonFrontend, parsePythonSource } from './python';
import { parseScriptSource } from './typescript';
import { parseTopologyJson } from './json';
import { looksLikeHfConfig, parseHfConfigJson } from './huggingface/json';

export type SourceKind = 'python' | 'script' | 'json';

export function sourceKindOf(fileName: string): SourceKind | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.py') || lower.endsWith('.pyi')) return 'python';
  if (/\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)$/.test(lower)) return 'script';
  if (lower.endsWith('.json')) return 'json';
  return undefined;
}

/** Loads the parsers' wasm once; call before `analyzeSourceSync`. */
export async function initFrontends(): Promise<void> {
  await initPythonFrontend();
}

/** Parses without analysis: the frontend's ModelSpecs. Requires `initFrontends()` for Python. */
/** `givenInput`: the input the analysis will use, which a forward computing sizes from its input is read at. */
export function parseSource(fileName: string, text: string, imports?: ImportOptions, givenInput: AnalyzeOptions = {}): FrontendResult | undefined {
  switch (sourceKindOf(fileName)) {
    case 'python':
      return parsePythonSource(fileName, text, imports, givenInput);
    case 'script':
      return parseScriptSource(fileName, text);
    case 'json':
      return looksLikeHfConfig(text) ? parseHfConfigJson(fileName, text) : parseTopologyJson(fileName, text);
    default:
      return undefined;
  }
}

/** Parse and analyse. Never throws for bad input: problems come back as diagnostics. Requires `initFrontends()`. */
/** `imports` follows Python imports into other files (see frontends/imports); omitted, imported names stay library paths. */
export function analyzeSourceSync(fileName: string, text: string, options: AnalyzeOptions = {}, imports?: ImportOptions): AnalysisResult {
  const parsed = parseSource(fileName, text, imports, options);
  if (!parsed) return { file: fileName, framework: undefined, models: [], diagnostics: [] };
  const models = parsed.models.map((spec) => analyzeModel(spec, options));
  return { file: fileName, framework: parsed.framework, models, diagnostics: parsed.diagnostics };
}

export async function analyzeSource(fileName: string, text: string, options: AnalyzeOptions = {}, imports?: ImportOptions): Promise<AnalysisResult> {
  await initFrontends();
  return analyzeSourceSync(fileName, text, options, imports);
}

export type { Framework, ImportOptions };
