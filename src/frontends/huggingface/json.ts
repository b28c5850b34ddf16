/**
 * A Hugging Face `config.json` opened directly: the model its `architectures`
 * entry names (the bare model when it names none WAP knows), built through the
 * catalogue. A JSON file without `model_type` is not a Hugging Face config.
 */
import { basename, dirname } from 'node:path';
import type { FrontendResult, SourceRange } from '../../core/ir';
import { modelClassType, type HfConfig } from './configs';
import { buildHfModel } from './registry';

export function looksLikeHfConfig(text: string): boolean {
  return /"model_type"\s*:/.test(text) && !/"(class_name|modelTopology)"\s*:/.test(text);
}

function rangeOfKey(text: string, key: string): SourceRange {
  const at = text.indexOf(`"${key}"`);
  if (at < 0) return { line: 1, column: 1, endLine: 1, endColumn: 1 };
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - before.lastIndexOf('\n');
  return { line, column, endLine: line, endColumn: column + key.length + 2 };
}

export function parseHfConfigJson(fileName: string, text: string): FrontendResult {
  let config: HfConfig;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    config = parsed as HfConfig;
  } catch (e) {
    const message = `${fileName} looks like a Hugging Face config but is not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
    return { framework: 'pytorch', models: [], diagnostics: [{ severity: 'error', message, line: 1, column: 1, code: 'parse-error' }] };
  }
  const architectures = Array.isArray(config.architectures) ? config.architectures.filter((a): a is string => typeof a === 'string') : [];
  const known = architectures.map((a) => ({ a, t: modelClassType(a) })).find((x) => x.t);
  const className = known?.a ?? 'AutoModel';
  const folder = basename(dirname(fileName));
  const spec = buildHfModel({
    config,
    head: known?.t?.head ?? 'base',
    encoderOnly: known?.t?.encoderOnly,
    name: folder && folder !== '.' ? folder : basename(fileName, '.json'),
    className,
    range: rangeOfKey(text, 'model_type'),
    source: basename(fileName),
  });
  return { framework: 'pytorch', models: [spec], diagnostics: [] };
}
