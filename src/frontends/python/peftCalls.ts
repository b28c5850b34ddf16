/**
 * huggingface/peft as a fine-tuning script calls it: `LoraConfig(r=8,
 * lora_alpha=32, target_modules=[...], lora_dropout=0.1)` is read into its
 * settings, and `get_peft_model(model, config)` freezes the model and records
 * the LoRA settings on it, which models.ts applies to the model's IR
 * (frontends/peft/lora.ts). Another PEFT method (prefix tuning, IA3, …), an
 * unreadable config or adapters loaded from disk (`PeftModel.from_pretrained`)
 * freeze the base model and leave a warning that the adapters are not modelled
 * (frozenParameters.ts).
 */
import type { SourceRange } from '../../core/ir';
import { CLASSIFIER_MODULE_NAMES, COMMON_LAYERS_PATTERN, DEFAULT_LORA_TARGETS, type LoraSettings } from '../peft/lora';
import { markFreezeModelled, setFrozen } from './frozenParameters';
import type { Interp } from './interpreter';
import { dictOf, iterItems, namedEntries, str, toNumber, truthy, type CallSite, type Value } from './values';

/** peft's LoRA config class, from the package or its modules. */
const LORA_CONFIG = /^peft\.((tuners\.)?(lora\.)?(config\.)?)?LoraConfig$/;
/** peft's entry points that freeze the base model they are given. */
export const PEFT_CALLS = /^peft\.((mapping|peft_model|utils|utils\.other)\.)?(get_peft_model|prepare_model_for_kbit_training|PeftModel\.from_pretrained)$/;
const PEFT_TYPE = '__peft_type__';

/** `LoraConfig(...)`: its keywords as a dict, tagged so get_peft_model knows what it holds. Undefined for other paths. */
export function peftConfig(path: string, kwargs: Map<string, Value>): Value | undefined {
  if (!LORA_CONFIG.test(path)) return undefined;
  return dictOf([...kwargs, [PEFT_TYPE, str('LORA')]]);
}

/** The LoRA settings get_peft_model calls gave model values (the value is the model a candidate reads). */
const adapters = new WeakMap<Value, LoraSettings>();

/** The LoRA settings a get_peft_model call gave a model value, if any. */
export function loraOf(model: Value): LoraSettings | undefined {
  return adapters.get(model);
}

/**
 * A PEFT wrapper call (`get_peft_model`, `prepare_model_for_kbit_training`, `PeftModel.from_pretrained`): freezes the
 * model it is given; get_peft_model with a readable LoraConfig also records the adapters. Returns whether `path` was one.
 */
export function peftWraps(interp: Interp, path: string, model: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite): boolean {
  if (!PEFT_CALLS.test(path)) return false;
  setFrozen(model, true, site);
  if (path.endsWith('prepare_model_for_kbit_training')) {
    markFreezeModelled(interp, site.node);
    return true;
  }
  if (!path.endsWith('get_peft_model')) return true;
  const lora = loraSettings(args[1] ?? kwargs.get('peft_config'), model, site.range);
  if (lora && (model.k === 'inst' || model.k === 'mod' || model.k === 'hf')) {
    adapters.set(model, lora);
    markFreezeModelled(interp, site.node);
  }
  return true;
}

function loraSettings(config: Value | undefined, model: Value, range: SourceRange): LoraSettings | undefined {
  const entries = new Map(namedEntries(config) ?? []);
  if (entries.get(PEFT_TYPE)?.k !== 'str') return undefined;
  const r = readNumber(entries.get('r'), 8);
  const alpha = readNumber(entries.get('lora_alpha'), 8);
  const dropout = readNumber(entries.get('lora_dropout'), 0);
  if (r === undefined || alpha === undefined || dropout === undefined || r <= 0 || !Number.isInteger(r)) return undefined;
  const targets = readTargets(entries.get('target_modules'), model);
  const saved = readNames(entries.get('modules_to_save'));
  const layers = readLayers(entries.get('layers_to_transform'), entries.get('layers_pattern'));
  if (!targets || !saved || layers === null) return undefined;
  // peft's sequence-classification model saves its classifier head whole, whatever modules_to_save says.
  const task = entries.get('task_type');
  const taskName = task?.k === 'str' ? task.v : task?.k === 'lib' ? task.path.split('.').pop() : undefined;
  const modulesToSave = taskName === 'SEQ_CLS' ? [...new Set([...saved, ...CLASSIFIER_MODULE_NAMES])] : saved;
  return { r, alpha, dropout, targets, modulesToSave, ...(layers ? { layers } : {}), unmodelled: unmodelledSettings(entries), range };
}

/** A list of module names (or one name); [] when absent; undefined when unreadable. */
function readNames(v: Value | undefined): string[] | undefined {
  if (v === undefined || v.k === 'none') return [];
  if (v.k === 'str') return [v.v];
  const items = iterItems(v);
  return items && items.every((i) => i.k === 'str') ? items.map((i) => (i as { v: string }).v) : undefined;
}

/** layers_to_transform (an index or a list) with layers_pattern; undefined when absent, null when unreadable. */
function readLayers(indices: Value | undefined, pattern: Value | undefined): LoraSettings['layers'] | null | undefined {
  if (indices === undefined || indices.k === 'none') return undefined;
  const list = indices.k === 'num' ? [indices] : iterItems(indices);
  const numbers = list?.map((i) => toNumber(i));
  if (!numbers || numbers.some((n) => n === undefined || !Number.isInteger(n))) return null;
  const patterns = pattern === undefined || pattern.k === 'none' ? [...COMMON_LAYERS_PATTERN] : readNames(pattern);
  return patterns && patterns.length > 0 ? { indices: numbers as number[], patterns } : null;
}

/** Settings that change what LoRA costs but that WAP prices as plain LoRA, in words. */
function unmodelledSettings(entries: Map<string, Value>): string[] {
  const out: string[] = [];
  const dora = entries.get('use_dora');
  if (dora && truthy(dora) !== false) out.push("use_dora (DoRA's magnitude vector and the weight norm it recomputes every forward)");
  const bias = entries.get('bias');
  if (bias && !(bias.k === 'str' && bias.v === 'none') && bias.k !== 'none') out.push(`bias=${bias.k === 'str' ? `'${bias.v}'` : 'an unread value'} (trains biases of the base model)`);
  for (const key of ['rank_pattern', 'alpha_pattern']) {
    const v = entries.get(key);
    if (v && v.k !== 'none' && !(v.k === 'dict' && v.map.size === 0)) out.push(`${key} (ranks or scales per module)`);
  }
  return out;
}

/** A keyword's number; its default when absent; undefined when written but unreadable. */
function readNumber(v: Value | undefined, fallback: number): number | undefined {
  return v === undefined || v.k === 'none' ? fallback : toNumber(v);
}

function readTargets(v: Value | undefined, model: Value): LoraSettings['targets'] | undefined {
  if (v === undefined || v.k === 'none') {
    // peft picks the targets by the Hugging Face model type; a plain nn.Module has no default and peft raises.
    const type = model.k === 'hf' ? model.config.model_type : undefined;
    const defaults = typeof type === 'string' ? DEFAULT_LORA_TARGETS[type] : undefined;
    return defaults ? [...defaults] : undefined;
  }
  if (v.k === 'str') return v.v === 'all-linear' ? 'all-linear' : { pattern: v.v };
  const items = iterItems(v);
  if (!items || !items.every((i) => i.k === 'str')) return undefined;
  return items.map((i) => (i as { v: string }).v);
}
