/**
 * The training precision a config next to the model states, so the planner
 * costs what the user actually runs:
 * - Accelerate YAML `mixed_precision: no|fp16|bf16|fp8`;
 * - DeepSpeed JSON `bf16.enabled` / `fp16.enabled` (neither: DeepSpeed trains in fp32);
 * - Lightning `Trainer(precision=…)`: "32-true"/32, "16-mixed"/16, "bf16-mixed",
 *   "16-true", "bf16-true", "transformer-engine" (fp8).
 * - Hugging Face Trainer: `TrainingArguments(bf16=True)` (fp16=, tf32=; trl's SFTConfig and kin); neither flag
 *   trains in fp32, a hint read after every other file's (accelerate launch's mixed precision applies then);
 * - `accelerate launch --mixed_precision bf16 train.py` in a launch script beside it (launchPrecision.ts);
 * - plain PyTorch: `torch.autocast(…, dtype=torch.bfloat16)`, `torch.amp.autocast`, `torch.cuda.amp.autocast`
 *   in the Python files (dtype absent: float16, CUDA autocast's default; a CPU or `enabled=False` one says nothing).
 * Values WAP cannot know ("auto", expressions) are not guesses: they give no hint.
 * A 16-bit hint also says how the tensors are held (AmpStyle): accelerate's mixed_precision and Lightning's
 * "-mixed" run torch.autocast over fp32 parameters; Lightning's "-true" casts the model and its optimizer state;
 * DeepSpeed keeps 16-bit weights with fp32 master weights in its optimizer.
 * The caller lists the directory; this module reads only what it is handed.
 */
import type { AmpStyle, Precision } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { lightningPrecision } from '../core/trainingPrecision';
import { ACCELERATE_PRECISION } from '../core/trainingPrecision';
import { detectConfigFormats, MAX_CONFIG_CHARS } from './check';
import { deepspeedEnabled } from './deepspeedSetup';
import { firstHint } from './firstHint';
import { staleDeepSpeedJson } from './inlineDeepSpeed';
import { launchPrecisionHint } from './launchPrecision';
import { isLaunchScriptName } from './launchScripts';
import { parseJsonConfig } from './jsonDoc';
import { callArgs, findCalls, intLiteral, pythonReady, stringLiteral, withPythonTree } from './python';
import { readAutocast } from './torchAmp';
import { isTrainingArguments, mentionsTrainingArguments, trainingArgumentsPrecision } from './trainingArguments';
import { parseYamlConfig, readString } from './yamlDoc';
import type { ConfigFormat } from './types';

export interface PrecisionHint {
  precision: Precision;
  /** For the report: 'accelerate_config.yaml (mixed_precision: bf16)'. */
  source: string;
  /** For 16-bit precisions the config states how tensors are held, and where that comes from. */
  ampStyle?: AmpStyle;
  ampStyleSource?: string;
}



function fromAccelerate(name: string, text: string): PrecisionHint | undefined {
  const root = parseYamlConfig(text);
  const v = readString(root, 'mixed_precision');
  const p = v ? ACCELERATE_PRECISION[v.value.toLowerCase()] : undefined;
  if (!p) return undefined;
  const hint: PrecisionHint = { precision: p, source: `${name} (mixed_precision: ${v!.value})` };
  // Under DeepSpeed or Megatron-LM, accelerate hands precision to that engine (master weights, the default style).
  const engine = readString(root, 'distributed_type')?.value.toUpperCase();
  if (p === 'fp16' || p === 'bf16') {
    if (engine !== 'DEEPSPEED' && engine !== 'MEGATRON_LM') return { ...hint, ampStyle: 'autocast', ampStyleSource: `${name} (mixed_precision: ${v!.value}: accelerate runs forward under torch.autocast)` };
  }
  return hint;
}

function fromDeepSpeed(name: string, text: string): PrecisionHint | undefined {
  const root = parseJsonConfig(text);
  for (const key of ['bf16', 'fp16'] as const) {
    const on = deepspeedEnabled(root, key);
    if (on === true) return { precision: key, source: `${name} (${key}.enabled)`, ampStyle: 'master-weights', ampStyleSource: `${name} (${key}.enabled: DeepSpeed keeps fp32 master weights in its optimizer)` };
    // "auto": the HF Trainer decides at launch; WAP cannot know which. Nor a value DeepSpeed would not take as a bool.
    if (on === 'auto' || on === 'unreadable') return undefined;
    // A section without "enabled" is enabled (DeepSpeed's default for a present fp16/bf16 block is false, so no).
  }
  return { precision: 'fp32', source: `${name} (no fp16/bf16 enabled: DeepSpeed trains in fp32)` };
}

function fromLightning(name: string, text: string): PrecisionHint | undefined {
  if (!pythonReady()) return undefined;
  return withPythonTree(text, (root) => {
    for (const call of findCalls(root, 'Trainer')) {
      const value = callArgs(call)?.keywords.get('precision');
      if (!value) continue;
      const raw = stringLiteral(value) ?? (intLiteral(value) !== undefined ? String(intLiteral(value)) : undefined);
      const read = raw !== undefined ? lightningPrecision(raw) : undefined;
      if (!read) continue;
      const source = `${name} (Trainer precision=${value.text})`;
      return { precision: read.precision, source, ...(read.holding ? { ampStyle: read.holding, ampStyleSource: source } : {}) };
    }
    return undefined;
  });
}

/**
 * A training loop's own autocast (torch.amp, documented in "Automatic Mixed Precision"): forward runs under
 * torch.autocast over fp32 parameters. The first CUDA autocast that certainly runs with a dtype WAP can read counts
 * (torchAmp.ts reads the call, as the plain-PyTorch script reader does).
 */
function fromAutocast(name: string, text: string): PrecisionHint | undefined {
  if (!pythonReady() || !text.includes('autocast')) return undefined;
  return withPythonTree(text, (root) => {
    for (const call of root.descendantsOfType('call')) {
      const read = call ? readAutocast(call, text) : undefined;
      if (!call || read === undefined || read === 'off' || read === 'run') continue;
      const where = `${name}:${call.startPosition.row + 1} (${call.text.replace(/\s+/g, ' ').slice(0, 80)})`;
      return { precision: read.precision, source: where, ampStyle: 'autocast', ampStyleSource: where };
    }
    return undefined;
  });
}

/**
 * Hugging Face Trainer's `TrainingArguments(bf16=True)` / `fp16=True`: the Trainer runs forward under torch.autocast
 * over fp32 parameters (through accelerate's mixed precision), fp16 with a gradient scaler, unless `deepspeed=` hands
 * it to DeepSpeed (master weights); `tf32=True` alone is TF32 matmuls in fp32 training; neither 16-bit flag is fp32
 * (`byDefault`). A value WAP cannot read (`bf16=torch.cuda.is_bf16_supported()`), `**kwargs`, or a call behind a
 * flag gives no hint (trainingArgumentsPrecision).
 */
function fromTrainingArguments(name: string, text: string): (PrecisionHint & { byDefault: boolean }) | undefined {
  if (!pythonReady() || !mentionsTrainingArguments(text)) return undefined;
  return withPythonTree(text, (root) => {
    for (const call of root.descendantsOfType('call')) {
      const fn = call?.childForFieldName('function');
      if (!call || !fn || !isTrainingArguments(call)) continue;
      const args = callArgs(call);
      const read = args && trainingArgumentsPrecision(args);
      if (!read) continue;
      const { precision, byDefault } = read;
      const at = `${name}:${call.startPosition.row + 1}`;
      if (byDefault) return { precision, byDefault, source: `${at} (${fn.text}(…) sets neither bf16 nor fp16: the Trainer trains in fp32)` };
      const where = `${at} (${fn.text}(… ${precision}=True …))`;
      if (precision === 'tf32') return { precision, byDefault, source: where };
      // With `deepspeed=` the Trainer hands mixed precision to DeepSpeed's engine (transformers fills its bf16/fp16
      // "auto" from these flags), which keeps 16-bit weights with fp32 masters in the optimizer, not autocast.
      const deepspeed = args.keywords.get('deepspeed');
      if (deepspeed && deepspeed.type !== 'none') return { precision, byDefault, source: where, ampStyle: 'master-weights', ampStyleSource: `${where} with deepspeed=` };
      return { precision, byDefault, source: where, ampStyle: 'autocast', ampStyleSource: where };
    }
    return undefined;
  });
}

const READ: Partial<Record<ConfigFormat, (name: string, text: string) => PrecisionHint | undefined>> = {
  accelerate: fromAccelerate,
  deepspeed: fromDeepSpeed,
  lightning: fromLightning,
};

/**
 * The first config that states a precision: `modelFile` (a name among `files`, the script being planned, as a
 * LightningModule's own Trainer call) first, then the others in the order given. Broken or oversized files give no hint.
 */
export function precisionHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): PrecisionHint | undefined {
  const ordered = [...files.filter((f) => f.name === modelFile), ...files.filter((f) => f.name !== modelFile)];
  // Lazily: a file's formats are detected only when the files before it said nothing. A Trainer without a 16-bit
  // flag comes last: `accelerate launch` with a mixed-precision config then trains in that config's precision.
  // accelerate's launch flag comes after the model's own file, whose code sets precision before the launch's does.
  const scripts = new Set(files.filter((f) => /\.py$/i.test(f.name)).map((f) => f.name));
  // A script that builds its DeepSpeed config in code trains with that one: a JSON beside it that no file names is stale.
  const stale = staleDeepSpeedJson(files, modelFile);
  const launched = (): PrecisionHint | undefined => launchPrecisionHint(files, scripts);
  function* readings(): Generator<() => PrecisionHint | undefined> {
    const defaults: PrecisionHint[] = [];
    if (ordered[0]?.name !== modelFile) yield launched;
    for (const f of ordered) {
      if (f.text.length > MAX_CONFIG_CHARS) continue;
      for (const format of detectConfigFormats(f.name, f.text)) {
        if (format === 'deepspeed' && stale(f.name)) continue;
        const read = READ[format];
        if (read) yield () => read(f.name, f.text);
      }
      if (/\.py$/i.test(f.name)) {
        yield () => {
          const hint = fromTrainingArguments(f.name, f.text);
          if (!hint) return undefined;
          const { byDefault, ...stated } = hint;
          if (!byDefault) return stated;
          defaults.push(stated);
          return undefined;
        };
        yield () => fromAutocast(f.name, f.text);
      }
      if (f.name === modelFile) yield launched;
    }
    for (const hint of defaults) yield () => hint;
  }
  return firstHint(readings());
}

/**
 * The options with what a hint adds: its precision when none was given, and its style when the plan's precision is
 * the hint's and no style was given (`--precision bf16` beside an accelerate config that says bf16 still autocasts).
 */
export function withPrecisionFrom(options: PlanOptions, hint: PrecisionHint | undefined): PlanOptions {
  if (!hint) return options;
  let out = options.precision ? options : { ...options, precision: hint.precision, precisionSource: hint.source };
  if (!out.ampStyle && hint.ampStyle && out.precision === hint.precision) out = { ...out, ampStyle: hint.ampStyle, ...(hint.ampStyleSource ? { ampStyleSource: hint.ampStyleSource } : {}) };
  return out;
}

/**
 * Files worth reading for a hint: configs and launch scripts by name, sorted so the answer does not depend on directory order, at
 * most 64; the model's own file (read first for every hint) is always among them, however large the folder.
 */
export function precisionHintCandidates(names: readonly string[], modelFile?: string): string[] {
  const sorted = names.filter((n) => (/\.(ya?ml|jsonc?|py)$/i.test(n) || isLaunchScriptName(n, '')) && n !== modelFile).sort();
  return modelFile && names.includes(modelFile) ? [modelFile, ...sorted.slice(0, 63)] : sorted.slice(0, 64);
}
