/**
 * Keras / TF.js JSON topology → ModelSpec.
 *
 * Reads three shapes of file:
 * - a TF.js `model.json` (`modelTopology` holding the Keras config directly or
 *   under `model_config`),
 * - Keras 2 `model.to_json()` (inbound_nodes as nested lists),
 * - Keras 3 `model.to_json()` (inbound_nodes as `{args, kwargs}` with
 *   `__keras_tensor__` references).
 * Positions come from jsonc-parser's syntax tree, so each layer points at its
 * object in the file. A JSON file that is not a model yields no models and no
 * diagnostics; a broken one that looks like a model yields one error.
 */
import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { FrontendResult, ModelSpec, SourceRange } from '../../core/ir';
import { buildFunctional, buildSequential, type LayerEntry } from './topology';

const MODEL_CLASSES = new Set(['Sequential', 'Functional', 'Model']);

/** Offset → 1-based line/column. */
export class LineMap {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }
  at(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.starts[lo] + 1 };
  }
  range(node: Node): SourceRange {
    const s = this.at(node.offset);
    const e = this.at(node.offset + node.length);
    return { line: s.line, column: s.column, endLine: e.line, endColumn: e.column };
  }
}

function child(node: Node | undefined, key: string): Node | undefined {
  return node?.type === 'object' ? findNodeAtLocation(node, [key]) : undefined;
}

function str(node: Node | undefined): string | undefined {
  return node?.type === 'string' ? (node.value as string) : undefined;
}

/** The node that holds `{class_name: 'Sequential'|'Functional'|'Model', config}`, if any. */
function findModelNode(root: Node): Node | undefined {
  const topology = child(root, 'modelTopology');
  const candidates = topology ? [child(topology, 'model_config'), topology] : [root];
  return candidates.find((n) => MODEL_CLASSES.has(str(child(n, 'class_name')) ?? '') && child(n, 'config') !== undefined);
}

function looksLikeTopology(text: string): boolean {
  return /"(class_name|modelTopology|model_config)"/.test(text);
}

export function parseTopologyJson(fileName: string, text: string): FrontendResult {
  const result: FrontendResult = { framework: 'keras-json', models: [], diagnostics: [] };
  try {
    const errors: ParseError[] = [];
    const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
    const lines = new LineMap(text);
    if (errors.length > 0 || !root) {
      // Broken JSON that is not a model is someone else's file: stay quiet.
      if (looksLikeTopology(text)) {
        const first = errors[0];
        const at = lines.at(first?.offset ?? 0);
        const what = first ? printParseErrorCode(first.error) : 'empty document';
        result.diagnostics.push({ severity: 'error', message: `invalid JSON in model topology: ${what}`, line: at.line, column: at.column, code: 'parse-error' });
      }
      return result;
    }
    const modelNode = findModelNode(root);
    if (!modelNode) return result;
    const model = readModel(modelNode, lines, fileName);
    if (model && model.layers.length > 0) result.models.push(model);
  } catch (err) {
    result.diagnostics.push({ severity: 'error', message: `internal error reading JSON topology: ${err instanceof Error ? err.message : String(err)}`, line: 1, column: 1, code: 'internal-error' });
  }
  return result;
}

function readModel(modelNode: Node, lines: LineMap, fileName: string): ModelSpec | undefined {
  const className = str(child(modelNode, 'class_name'))!;
  const configNode = child(modelNode, 'config')!;
  // Old Keras wrote a Sequential's config as the bare list of layers.
  const layersNode = configNode.type === 'array' ? configNode : child(configNode, 'layers');
  if (layersNode?.type !== 'array') return undefined;
  const entries: LayerEntry[] = (layersNode.children ?? []).filter((n) => n.type === 'object').map((n) => readLayer(n, lines));
  const base = fileName.split(/[\\/]/).pop()?.replace(/\.json$/i, '') ?? 'model';
  const name = str(child(configNode, 'name')) ?? base;
  const range = lines.range(modelNode);
  const config = configNode.type === 'object' ? (getNodeValue(configNode) as Record<string, unknown>) : {};
  const built = className === 'Sequential' ? buildSequential(entries, config) : buildFunctional(entries, config, range);
  return {
    name,
    framework: 'keras-json',
    range,
    layout: built.channelsFirst ? 'channels_first' : 'channels_last',
    inputs: built.inputs,
    layers: built.layers,
    outputs: built.outputs,
    diagnostics: built.diagnostics,
  };
}

function readLayer(node: Node, lines: LineMap): LayerEntry {
  const value = getNodeValue(node) as Record<string, unknown>;
  const config = (value.config !== null && typeof value.config === 'object' && !Array.isArray(value.config) ? value.config : {}) as Record<string, unknown>;
  const className = typeof value.class_name === 'string' ? value.class_name : 'Unknown';
  const name = typeof value.name === 'string' ? value.name : typeof config.name === 'string' ? config.name : className.toLowerCase();
  return { className, name, config, inboundNodes: Array.isArray(value.inbound_nodes) ? value.inbound_nodes : [], range: lines.range(node) };
}
