/**
 * The optimizer a user trains with, read (never run) from the code and configs
 * beside the model, so its state is priced as what they run: an LLM trained
 * with AdamW keeps two fp32 moments per parameter, not SGD momentum's one, a
 * difference of 4 bytes per parameter (28 GB for a 7B model without ZeRO).
 * - optimizer constructors in the model's own file (`torch.optim.AdamW(…)`,
 *   `optim.SGD(…, momentum=0.9)`, `FusedAdam(…)`): nanoGPT builds AdamW in
 *   model.py's configure_optimizers, a LightningModule in its own;
 * - then a DeepSpeed JSON `"optimizer": {"type": …}` beside it (DeepSpeed
 *   builds that optimizer itself, whatever the launch script constructs);
 * - then a Hugging Face Trainer's `TrainingArguments(optim=…)` in the model's
 *   own file (its AdamW when `optim` is absent);
 * - then the constructors, and Trainer arguments, in the neighbouring Python
 *   files (train.py).
 * State per parameter is what the planner needs (OptimizerKind): two moments
 * (Adam and its variants, LAMB: You et al., ICLR 2020; Adadelta), one
 * (SGD with momentum, RMSprop, Adagrad, Lion: Chen et al., 2023) or none
 * (plain SGD), full-width or 8-bit block-wise (bitsandbytes' `bnb.optim.AdamW8bit`, `optim="paged_adamw_8bit"`:
 * Dettmers et al., ICLR 2022). Other optimizers (factored, 4-bit) give no hint.
 */
import type { Node } from 'web-tree-sitter';
import type { OptimizerKind } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { MAX_CONFIG_CHARS } from './check';
import { firstHint } from './firstHint';
import { parseJsonConfig, valueAt } from './jsonDoc';
import { callArgs, calleeName, pythonReady, stringLiteral, withPythonTree } from './python';
import { isTrainingArguments } from './trainingArguments';

export interface OptimizerHint {
  optimizer: OptimizerKind;
  /** For the report: 'model.py:287 (torch.optim.AdamW)', 'ds_config.json (optimizer.type: AdamW)'. */
  source: string;
}

/** Constructor names by the state they keep; SGD depends on its momentum argument. */
const STATE_OF: Record<string, OptimizerKind> = {
  Adam: 'adam', AdamW: 'adam', Adamax: 'adam', NAdam: 'adam', RAdam: 'adam', Adadelta: 'adam',
  FusedAdam: 'adam', FusedLAMB: 'adam', FusedLamb: 'adam', Lamb: 'adam', LAMB: 'adam', DeepSpeedCPUAdam: 'adam', FusedAdamW: 'adam',
  RMSprop: 'momentum', Adagrad: 'momentum', Lion: 'momentum', FusedSGD: 'momentum',
  // bitsandbytes (bnb.optim): 32-bit and paged variants keep full-width state; paged state is CUDA unified memory,
  // which pages to the host only when the GPU runs out, so it is priced on the GPU like the rest.
  Adam32bit: 'adam', AdamW32bit: 'adam', PagedAdam: 'adam', PagedAdamW: 'adam', PagedAdam32bit: 'adam', PagedAdamW32bit: 'adam', LAMB32bit: 'adam',
  Lion32bit: 'momentum', PagedLion: 'momentum', PagedLion32bit: 'momentum', RMSprop32bit: 'momentum', Adagrad32bit: 'momentum', LARS: 'momentum', LARS32bit: 'momentum',
  Adam8bit: 'adam8bit', AdamW8bit: 'adam8bit', PagedAdam8bit: 'adam8bit', PagedAdamW8bit: 'adam8bit', LAMB8bit: 'adam8bit',
  // bitsandbytes' SGD8bit requires momentum (it rejects momentum=0).
  Lion8bit: 'momentum8bit', PagedLion8bit: 'momentum8bit', RMSprop8bit: 'momentum8bit', Adagrad8bit: 'momentum8bit', SGD8bit: 'momentum8bit', LARS8bit: 'momentum8bit',
};

/** bitsandbytes' optimizers take `optim_bits=8` (`bnb.optim.AdamW(params, optim_bits=8)`): the 8-bit kind of the same state. */
function withOptimBits(call: Node, kind: OptimizerKind): OptimizerKind {
  const bits = callArgs(call)?.keywords.get('optim_bits');
  if (bits?.text.trim() !== '8') return kind;
  return kind === 'adam' ? 'adam8bit' : kind === 'momentum' ? 'momentum8bit' : kind;
}

/** The state an optimizer class keeps, or undefined; own keys only (`optim.constructor` is no optimizer). */
const stateOf = (name: string): OptimizerKind | undefined => (Object.prototype.hasOwnProperty.call(STATE_OF, name) ? STATE_OF[name] : undefined);

/** DeepSpeed's optimizer types (case-insensitive, as DeepSpeed matches them). */
const DEEPSPEED_STATE: Record<string, OptimizerKind> = {
  adam: 'adam', adamw: 'adam', lamb: 'adam', onebitadam: 'adam', zerooneadam: 'adam', onebitlamb: 'adam', adagrad: 'momentum', lion: 'momentum',
};

function fromDeepSpeed(name: string, text: string): OptimizerHint | undefined {
  const type = valueAt(parseJsonConfig(text), ['optimizer', 'type']);
  if (type?.type !== 'string' || typeof type.value !== 'string') return undefined;
  const key = type.value.toLowerCase();
  const kind = Object.prototype.hasOwnProperty.call(DEEPSPEED_STATE, key) ? DEEPSPEED_STATE[key] : undefined;
  return kind && { optimizer: kind, source: `${name} (optimizer.type: ${type.value})` };
}

/** SGD keeps a momentum buffer when `momentum` is given and is not a literal 0 (torch.optim.SGD's default is 0). */
function sgdKind(call: Node): OptimizerKind {
  const m = callArgs(call)?.keywords.get('momentum');
  if (!m) return 'sgd';
  return /^0*(\.0*)?$/.test(m.text.trim()) ? 'sgd' : 'momentum';
}

/**
 * The first optimizer constructor in a Python file. A call counts when it is written through a module path that
 * names an optimizer package (`torch.optim.AdamW`, `optim.Adam`, `apex.optimizers.FusedAdam`) or its bare name was
 * imported (`from torch.optim import AdamW`): a user's own `Adam` class elsewhere is not taken for torch's.
 */
function fromPython(name: string, text: string): OptimizerHint | undefined {
  if (!pythonReady() || !/\b(optim|optimizers|Adam|SGD|LAMB|Lamb|Lion|RMSprop|Adagrad)\b/.test(text)) return undefined;
  return withPythonTree(text, (root) => {
    // What the code calls each imported optimizer by (`from torch.optim import AdamW as AW`: AW → AdamW).
    const imported = new Map<string, string>();
    for (const imp of root.descendantsOfType('import_from_statement')) {
      const module = imp?.childForFieldName('module_name')?.text ?? '';
      if (!/optim|apex|deepspeed|transformers|timm|lion_pytorch/.test(module)) continue;
      for (const n of imp!.descendantsOfType(['dotted_name', 'aliased_import'])) {
        if (!n || n === imp!.childForFieldName('module_name')) continue;
        const alias = n.type === 'aliased_import' ? n.childForFieldName('alias')?.text : undefined;
        const original = n.type === 'aliased_import' ? n.childForFieldName('name')?.text : n.text;
        if (original && (stateOf(original) || original === 'SGD')) imported.set(alias ?? original, original);
      }
    }
    for (const call of root.descendantsOfType('call')) {
      if (!call) continue;
      const fn = call.childForFieldName('function');
      const callee = calleeName(call);
      if (!fn || !callee) continue;
      const qualified = fn.type === 'attribute' && /(^|\.)(optim|optimizers|adam|lamb|lion_pytorch)\./.test(`${fn.text}`);
      const bare = fn.type === 'identifier' && imported.has(callee);
      if (!qualified && !bare) continue;
      const original = bare ? imported.get(callee)! : callee;
      const named = original === 'SGD' ? sgdKind(call) : stateOf(original);
      const kind = named && withOptimBits(call, named);
      if (!kind) continue;
      return { optimizer: kind, source: `${name}:${call.startPosition.row + 1} (${fn.text})` };
    }
    return undefined;
  });
}

/**
 * Trainer's `optim` names (transformers' OptimizerNames) for the optimizers whose state WAP prices; absent, the
 * Trainer builds torch's AdamW ('adamw_torch'). The 8-bit ones are bitsandbytes' (adamw_torch_8bit: torchao's, whose
 * smaller blocks memory/optimizerState.ts allows for). 4-bit, factored (Adafactor), AdEMAMix and GaLore ones give no hint.
 */
const TRAINER_OPTIM: Record<string, OptimizerKind> = {
  adamw_torch: 'adam', adamw_torch_fused: 'adam', adamw_hf: 'adam', adamw_apex_fused: 'adam', adamw_anyprecision: 'adam', paged_adamw_32bit: 'adam',
  sgd: 'sgd', adagrad: 'momentum', rmsprop: 'momentum', lion_32bit: 'momentum', paged_lion_32bit: 'momentum', rmsprop_bnb: 'momentum', rmsprop_bnb_32bit: 'momentum',
  adamw_bnb_8bit: 'adam8bit', adamw_8bit: 'adam8bit', paged_adamw_8bit: 'adam8bit', adamw_torch_8bit: 'adam8bit',
  lion_8bit: 'momentum8bit', paged_lion_8bit: 'momentum8bit', rmsprop_bnb_8bit: 'momentum8bit',
};

/** `TrainingArguments(optim="paged_adamw_32bit")`, or without `optim` the Trainer's AdamW. */
function fromTrainingArguments(name: string, text: string): OptimizerHint | undefined {
  if (!pythonReady() || !/Arguments|Config/.test(text)) return undefined;
  return withPythonTree(text, (root) => {
    for (const call of root.descendantsOfType('call')) {
      if (!call || !isTrainingArguments(call)) continue;
      const optim = callArgs(call)?.keywords.get('optim');
      const value = optim ? stringLiteral(optim) : 'adamw_torch';
      const kind = value !== undefined && Object.prototype.hasOwnProperty.call(TRAINER_OPTIM, value) ? TRAINER_OPTIM[value] : undefined;
      const fn = call.childForFieldName('function')?.text ?? 'TrainingArguments';
      return kind && { optimizer: kind, source: `${name}:${call.startPosition.row + 1} (${fn}${optim ? `(optim=${optim.text})` : ": the Trainer's default adamw_torch"})` };
    }
    return undefined;
  });
}

/**
 * The optimizer the files state, in the order the header gives: `modelFile` (a name among `files`), a DeepSpeed
 * config, the other Python files. Broken or oversized files give no hint.
 */
export function optimizerHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): OptimizerHint | undefined {
  type SourceFile = { name: string; text: string };
  const usable = files.filter((f) => f.text.length <= MAX_CONFIG_CHARS);
  const isPython = (f: SourceFile) => /\.py$/i.test(f.name);
  const read = (file: SourceFile, how: (name: string, text: string) => OptimizerHint | undefined) => () => how(file.name, file.text);
  const own = usable.filter((f) => isPython(f) && f.name === modelFile);
  const others = usable.filter((f) => isPython(f) && f.name !== modelFile);
  return firstHint([
    ...own.map((f) => read(f, fromPython)),
    ...usable.filter((f) => /\.jsonc?$/i.test(f.name) && /"optimizer"/.test(f.text)).map((f) => read(f, fromDeepSpeed)),
    ...own.map((f) => read(f, fromTrainingArguments)),
    ...others.map((f) => read(f, fromPython)),
    ...others.map((f) => read(f, fromTrainingArguments)),
  ]);
}

/** The options with the hint's optimizer, unless one was given explicitly (a flag or setting: `optimizerSource` set). */
export function withOptimizerFrom(options: PlanOptions, hint: OptimizerHint | undefined): PlanOptions {
  if (!hint || options.optimizerSource) return options;
  const { optimizerAssumed: _defaulted, ...rest } = options;
  return { ...rest, optimizer: hint.optimizer, optimizerSource: hint.source };
}
