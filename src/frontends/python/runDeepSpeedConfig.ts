/**
 * `deepspeed.initialize(config={...})` with a config the script builds in code, read as the run has it
 * (DeepSpeedExamples' cifar: `get_ds_config(args)` with `"bf16": {"enabled": args.dtype == "bf16"}`). A file's name
 * there is the JSON's to say (configs/precisionHint.ts reads it); a value WAP cannot know states nothing.
 * - Precision: the 16-bit section that is enabled, with fp32 master weights in DeepSpeed's optimizer; both known and
 *   off, fp32 (DeepSpeed's default).
 * - Batch: `train_batch_size` is the global batch (DeepSpeed checks it equals micro-batch × accumulation × data
 *   parallel ranks); without it, `train_micro_batch_size_per_gpu` × `gradient_accumulation_steps` is each process's.
 */
import type { Interp } from './interpreter';
import { notePrecision, statedAt } from './runPrecision';
import { keyOf, positiveWhole, str, type CallSite, type Value } from './values';

/** A key of a dict the run built, or undefined when it is not there or the value is no dict. */
function entry(value: Value | undefined, key: string): Value | undefined {
  return value?.k === 'dict' ? value.map.get(keyOf(str(key)))?.[1] : undefined;
}

function notePrecisionOf(interp: Interp, config: Value, at: string): void {
  const enabled = (section: string): boolean | undefined => {
    const block = entry(config, section);
    if (block === undefined) return false;
    const on = entry(block, 'enabled');
    return on?.k === 'bool' ? on.v : on === undefined && block.k === 'dict' ? false : undefined;
  };
  const [bf16, fp16] = [enabled('bf16'), enabled('fp16')];
  if (bf16 === true || fp16 === true) {
    const precision = bf16 ? 'bf16' : 'fp16';
    notePrecision(interp, { precision, holding: 'master-weights', source: `${at} (deepspeed.initialize config: ${precision}.enabled)` }, false);
  } else if (bf16 === false && fp16 === false) {
    notePrecision(interp, { precision: 'fp32', source: `${at} (deepspeed.initialize config: neither bf16 nor fp16 enabled, DeepSpeed trains in fp32)` }, false);
  }
}

function noteBatchOf(interp: Interp, config: Value, at: string): void {
  if (interp.run.engineBatch) return;
  const global = positiveWhole(entry(config, 'train_batch_size'));
  if (global !== undefined) {
    interp.run.engineBatch = { samples: global, perProcess: false, source: `${at} (deepspeed.initialize config: train_batch_size ${global})` };
    return;
  }
  const micro = positiveWhole(entry(config, 'train_micro_batch_size_per_gpu'));
  const steps = entry(config, 'gradient_accumulation_steps');
  const accumulation = steps === undefined ? 1 : positiveWhole(steps);
  if (micro === undefined || accumulation === undefined) return;
  const how = steps === undefined ? `train_micro_batch_size_per_gpu ${micro}` : `train_micro_batch_size_per_gpu ${micro} × gradient_accumulation_steps ${accumulation}`;
  interp.run.engineBatch = { samples: micro * accumulation, perProcess: true, source: `${at} (deepspeed.initialize config: ${how} per process)`, perForward: { samples: micro, said: `${at}'s train_micro_batch_size_per_gpu ${micro}` } };
}

export function noteDeepSpeedConfig(interp: Interp, path: string, kwargs: Map<string, Value>, site: CallSite): void {
  if (!/^deepspeed\.initialize$/.test(path)) return;
  // `config_params` is the keyword's name before DeepSpeed 0.3.
  const config = kwargs.get('config') ?? kwargs.get('config_params');
  if (config?.k !== 'dict') return;
  const at = statedAt(interp, site);
  notePrecisionOf(interp, config, at);
  noteBatchOf(interp, config, at);
}
