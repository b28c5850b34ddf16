/**
 * The precision the training code builds its trainer with, as the run computes it: a Lightning
 * `Trainer(precision=cfg.trainer.precision)` whose value comes from a Hydra config, a Hugging Face
 * `TrainingArguments(bf16=cfg.bf16)` (or trl's SFTConfig and kin). The config reader (configs/precisionHint.ts)
 * reads these calls only where the value is written literally; here the interpreter knows the value, so a Hydra or
 * argparse project's precision is the one it trains in, not the GPU's default. The first such call with a value WAP
 * knows counts, named with where it is. A call that sets no precision trains in the stack's default, fp32 (Lightning's
 * "32-true", the Trainer's neither-flag), which counts only after any stated one and only where no `**splat` could
 * have hidden the keyword. A script's own `torch.autocast(device_type="cuda", dtype=ptdtype)` (nanoGPT looks its
 * dtype up from a config word) states the same thing for a plain training loop.
 */
import type { ModelSpec } from '../../core/ir';
import type { RunPrecision } from '../../core/runFacts';
import { ACCELERATE_PRECISION, lightningPrecision, type TrainingPrecision } from '../../core/trainingPrecision';
import type { Interp } from './interpreter';
import { fileLabel } from './runFacts';
import type { CallSite, Value } from './values';

/** transformers' TrainingArguments and its subclasses, and trl's configs (SFTConfig, DPOConfig…), as called. */
export const TRAINING_ARGUMENTS = /^(transformers\.(training_args(_seq2seq)?\.)?(Seq2Seq)?TrainingArguments|trl\.(trainer\.)?(\w+\.)?\w+Config)$/;

/** `train.py:17`: the file the call is in (an imported module's own, not only the analysed script). */
export const statedAt = (interp: Interp, site: CallSite): string => `${fileLabel(site.range.file ?? interp.file)}:${site.range.line}`;

/** Records a stated precision (the first wins), or a default one where none is stated yet. */
export function notePrecision(interp: Interp, run: RunPrecision, byDefault: boolean): void {
  if (byDefault) interp.run.precisionDefault ??= run;
  else interp.run.precision ??= run;
}

/** Whether the call's own text may pass keywords WAP did not see (`Trainer(**cfg.trainer)`). */
const maySplat = (interp: Interp, site: CallSite): boolean => interp.text(site.node).includes('**');

/** A Lightning Trainer's `precision=` as the run has it; none given is Lightning's "32-true". */
export function noteLightningPrecision(interp: Interp, kwargs: Map<string, Value>, site: CallSite): void {
  const value = kwargs.get('precision');
  if (value === undefined || value.k === 'none') {
    if (!maySplat(interp, site)) notePrecision(interp, { precision: 'fp32', source: `${statedAt(interp, site)} (a Lightning Trainer without precision= trains in "32-true")` }, true);
    return;
  }
  const word = value.k === 'str' ? value.v : value.k === 'num' && !value.float ? String(value.v) : undefined;
  const read = word !== undefined ? lightningPrecision(word) : undefined;
  if (read) notePrecision(interp, { ...read, source: `${statedAt(interp, site)} (Trainer precision="${word}")` }, false);
}

/**
 * `Accelerator(mixed_precision="bf16")` as the run has it: accelerate autocasts over fp32 parameters. Without the
 * keyword (or with one the run computes) the launch's config or `accelerate launch --mixed_precision` decides, and
 * the configs beside the script say it (configs/precisionHint.ts).
 */
export function noteAcceleratorPrecision(interp: Interp, path: string, kwargs: Map<string, Value>, site: CallSite): void {
  if (!/^accelerate\.(accelerator\.)?Accelerator$/.test(path)) return;
  const word = kwargs.get('mixed_precision');
  if (word?.k !== 'str') return;
  const precision = ACCELERATE_PRECISION[word.v.toLowerCase()];
  if (!precision) return;
  const source = `${statedAt(interp, site)} (Accelerator mixed_precision="${word.v}")`;
  notePrecision(interp, precision === 'fp16' || precision === 'bf16' ? { precision, holding: 'autocast', source } : { precision, source }, false);
}

/**
 * `TrainingArguments(bf16=…, fp16=…)` as the run has it: a 16-bit flag that is True trains in that precision under
 * torch.autocast over fp32 parameters (the Trainer hands it to accelerate), or with fp32 master weights when
 * `deepspeed=` hands it to DeepSpeed; under `fsdp=`, FSDP's MixedPrecision holds the tensors its own way.
 */
export function noteTrainingArgumentsPrecision(interp: Interp, path: string, kwargs: Map<string, Value>, site: CallSite): void {
  if (!TRAINING_ARGUMENTS.test(path)) return;
  const tf32 = kwargs.get('tf32');
  if (tf32?.k === 'bool') noteTf32(interp, tf32.v, site, `${path.replace(/^.*\./, '')}(tf32=${tf32.v ? 'True' : 'False'})`);
  const on = (name: string): boolean => kwargs.get(name)?.k === 'bool' && (kwargs.get(name) as { v: boolean }).v;
  const precision = on('bf16') ? 'bf16' : on('fp16') ? 'fp16' : undefined;
  if (!precision) {
    // Neither flag True: fp32, where both are known (False or absent) and no splat could hold one.
    const known = (name: string): boolean => kwargs.get(name) === undefined || kwargs.get(name)?.k === 'bool';
    if (known('bf16') && known('fp16') && !maySplat(interp, site)) notePrecision(interp, { precision: 'fp32', source: `${statedAt(interp, site)} (${path.replace(/^.*\./, '')}(…) sets neither bf16 nor fp16)` }, true);
    return;
  }
  const given = (name: string): boolean => { const v = kwargs.get(name); return v !== undefined && v.k !== 'none' && !(v.k === 'str' && v.v === '') && !(v.k === 'bool' && !v.v); };
  const holding = given('deepspeed') ? 'master-weights' : given('fsdp') ? undefined : 'autocast';
  notePrecision(interp, { precision, ...(holding ? { holding } : {}), source: `${statedAt(interp, site)} (${path.replace(/^.*\./, '')}(${precision}=True))` }, false);
}

/** torch's autocast entry points; the CPU ones (torch.cpu.amp.autocast) change nothing on a GPU. */
const AUTOCAST = /^torch\.(autocast|amp\.(autocast_mode\.)?autocast|cuda\.amp\.(autocast_mode\.)?autocast)$/;

/** torch's 16-bit dtypes as autocast takes them (`torch.half` is float16). */
const AUTOCAST_DTYPES: Readonly<Record<string, TrainingPrecision>> = { 'torch.bfloat16': 'bf16', 'torch.float16': 'fp16', 'torch.half': 'fp16' };

/**
 * An autocast context a training script builds outside any model's forward, as the run has it. On CUDA its dtype
 * defaults to float16 (torch.get_autocast_gpu_dtype); `enabled=False` trains in fp32. A dtype WAP cannot know
 * (nanoGPT's `'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'`) still says the run holds fp32 parameters
 * under autocast, so the plan keeps the GPU's default precision with that holding. A forward's own autocast (a
 * rotary embedding kept in fp32) is the model's, not the run's: it is not read.
 */
export function noteAutocastPrecision(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  if (!AUTOCAST.test(path) || interp.graph?.scope.length) return;
  const cudaOnly = path.startsWith('torch.cuda.');
  const device = cudaOnly ? undefined : (kwargs.get('device_type') ?? args[0]);
  // A device the run picks at run time (`f'cuda:{local_rank}'`, `'cuda' if torch.cuda.is_available() else 'cpu'`) is
  // the GPU the plan is for: the autocast is the run's, and its source says the device was not read.
  const deviceUnread = device?.k === 'unknown';
  if (!cudaOnly && !deviceUnread && !(device?.k === 'str' && /^cuda\b/.test(device.v))) return;
  const enabled = kwargs.get('enabled') ?? (cudaOnly ? args[0] : args[2]);
  const dtype = kwargs.get('dtype') ?? args[1];
  const defaulted = dtype === undefined || dtype.k === 'none';
  const named = defaulted ? 'torch.float16' : dtype.k === 'lib' ? dtype.path : undefined;
  const source = (what: string): string => `${statedAt(interp, site)} (${path.replace('.autocast_mode', '')}, ${what}${deviceUnread ? ', on the GPU the plan is for: its device_type is read at run time' : ''})`;
  // Off, or at float32 (CUDA autocast warns and disables itself for a dtype it does not support): fp32.
  if ((enabled?.k === 'bool' && !enabled.v) || named === 'torch.float32' || named === 'torch.float') {
    notePrecision(interp, { precision: 'fp32', source: source(enabled?.k === 'bool' && !enabled.v ? 'enabled=False' : `dtype ${named}`) }, true);
    return;
  }
  if (enabled !== undefined && enabled.k !== 'bool') return;
  const precision = named ? AUTOCAST_DTYPES[named] : undefined;
  if (named && !precision) return;
  notePrecision(interp, precision ? { precision, holding: 'autocast', source: source(`dtype ${named}${defaulted ? ', its CUDA default' : ''}`) } : { holding: 'autocast', source: source('a dtype the run picks') }, false);
}

/**
 * TF32 matmuls switched on or off for fp32 work: `torch.backends.cuda.matmul.allow_tf32 = True` (nanoGPT),
 * `torch.set_float32_matmul_precision('high')` (llm.c's --tensorcores, Lightning's advice), TrainingArguments'
 * `tf32=True`. PyTorch's default since 1.12 is off for matmuls (CUDA semantics, "TensorFloat-32 (TF32) on Ampere").
 * The last switch the run makes holds; one inside a model's forward is not the run's.
 */
export function noteTf32(interp: Interp, on: boolean, site: CallSite, what: string): void {
  if (interp.graph?.scope.length) return;
  interp.run.tf32 = { on, source: `${statedAt(interp, site)} (${what})` };
}

/** `torch.backends.cudnn.allow_tf32 = False`: fp32 convolutions off TF32 tensor cores (on is PyTorch's default). */
export function noteConvolutionTf32(interp: Interp, on: boolean, site: CallSite): void {
  if (interp.graph?.scope.length) return;
  interp.run.convolutionTf32 = { on, source: `${statedAt(interp, site)} (torch.backends.cudnn.allow_tf32 = ${on ? 'True' : 'False'})` };
}

/** `torch.set_float32_matmul_precision(…)`: "high" and "medium" let fp32 matmuls run on TF32 tensor cores. */
export function noteMatmulPrecision(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  if (path !== 'torch.set_float32_matmul_precision') return;
  const level = args[0] ?? kwargs.get('precision');
  if (level?.k === 'str' && ['high', 'medium', 'highest'].includes(level.v)) noteTf32(interp, level.v !== 'highest', site, `set_float32_matmul_precision('${level.v}')`);
}

/** The spec with the run's precision: a stated one, else the default of the trainer the code builds. */
export function withRunPrecision(interp: Interp, spec: ModelSpec): ModelSpec {
  let run = interp.run.precision ?? interp.run.precisionDefault;
  // fp32 with TF32 matmuls runs them on tensor cores at the TF32 peak (A100: 156 TFLOPS against 19.5).
  if (run?.precision === 'fp32' && interp.run.tf32?.on) run = { ...run, precision: 'tf32', source: `${run.source}, with TF32 matmuls from ${interp.run.tf32.source}` };
  const convolutions = interp.run.convolutionTf32;
  if (convolutions && !convolutions.on) run = { ...(run ?? { source: convolutions.source }), convolutionsWithoutTf32: convolutions.source };
  return run && !spec.runPrecision ? { ...spec, runPrecision: run } : spec;
}

