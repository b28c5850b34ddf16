/**
 * Detection and checking across all formats: the entry points the LSP server
 * and the CLI call (re-exported by index.ts).
 */
import type { PlanReport } from '../protocol/plan';
import { flagReplacedValues } from './comments';
import { combineFixes, applyTextEdits } from './edits';
import { initPythonConfigs, pythonReady } from './python';
import { READERS } from './readers';
import { MalformedConfig, type ConfigCheckResult, type ConfigFinding, type ConfigFormat, type FileAccess, type TextEdit } from './types';
const PYTHON_FORMATS = new Set<ConfigFormat>(['lightning', 'keras-mirrored', 'hf-trainer', 'torch-script']);

/** Configs are small; anything bigger is refused before parsing so an editor never stalls on it. */
export const MAX_CONFIG_CHARS = 5 * 1024 * 1024;
/** How much of an oversized file detection looks at (enough to see the keys, bounded). */
const DETECT_WINDOW = 64 * 1024;

export async function initConfigReaders(): Promise<void> {
  await initPythonConfigs();
}

export function detectConfigFormats(fileName: string, text: string): ConfigFormat[] {
  const sample = text.length > MAX_CONFIG_CHARS ? text.slice(0, DETECT_WINDOW) : text;
  return READERS.filter((r) => r.detect(fileName, sample)).map((r) => r.format);
}

function malformed(format: ConfigFormat, message: string, range = { start: 0, end: 0 }): ConfigFinding {
  return { format, severity: 'error', code: 'malformed-config', message, range };
}

/**
 * `formats`: the caller's own detectConfigFormats result for this same text,
 * so a caller that already detected (the LSP server) does not detect twice.
 * `files`: reads the files a config refers to (a DeepSpeed JSON by path).
 */
export function checkConfig(fileName: string, text: string, plan: PlanReport | undefined, formats: ConfigFormat[] = detectConfigFormats(fileName, text), files?: FileAccess): ConfigCheckResult {
  if (formats.length === 0) return { formats, findings: [] };
  if (text.length > MAX_CONFIG_CHARS) {
    const mb = (text.length / (1024 * 1024)).toFixed(1);
    return { formats, findings: [malformed(formats[0]!, `Config is ${mb} MB; WAP reads training configs up to ${MAX_CONFIG_CHARS / (1024 * 1024)} MB and did not check this one`, { start: 0, end: Math.min(1, text.length) })] };
  }
  const findings: ConfigFinding[] = [];
  for (const format of formats) {
    const reader = READERS.find((r) => r.format === format);
    if (!reader) continue; // a caller-given format WAP has no reader for
    if (PYTHON_FORMATS.has(format) && !pythonReady()) {
      findings.push({ format, severity: 'info', code: 'reader-unavailable', message: 'WAP: the Python config reader is still loading; checks appear on the next change', range: { start: 0, end: 0 } });
      continue;
    }
    try {
      findings.push(...reader.check(fileName, text, plan, files));
    } catch (e) {
      const f = e instanceof MalformedConfig
        ? malformed(format, e.message, e.range)
        : malformed(format, `WAP could not read this ${format} config: ${e instanceof Error ? e.message : String(e)}`);
      findings.push(f);
    }
  }
  // A malformed config gets one diagnostic (the first format's, when several read the same broken file), never half-read findings beside it.
  const broken = findings.find((f) => f.code === 'malformed-config');
  if (broken) return { formats, findings: [broken] };
  // A fix that leaves a comment saying the old value says so in its title.
  return { formats, findings: findings.map((f) => (f.fix ? { ...f, fix: flagReplacedValues(text, f.fix) } : f)) };
}

/** Every non-conflicting fix applied at once (the "Fix all WAP config issues" action and `wap config --fix`). */
export function fixAll(fileName: string, text: string, plan: PlanReport | undefined, formats?: ConfigFormat[], files?: FileAccess): { edits: TextEdit[]; text: string } {
  const { findings } = checkConfig(fileName, text, plan, formats, files);
  const edits = combineFixes(findings.flatMap((f) => (f.fix ? [f.fix] : [])));
  return { edits, text: applyTextEdits(text, edits) };
}
