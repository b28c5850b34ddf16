/**
 * A model an optimizer steps is a model the script trains: `opt = torch.optim.AdamW(model.parameters(), lr=…)` in a
 * plain training loop says which of the models a `main()` builds is trained, as handing it to a Trainer or DDP does
 * (trainingWrappers.ts). Without it, a loop that neither wraps nor returns its model had no model at all ("no model
 * found"), though every PyTorch training loop builds its optimizer from the model's parameters.
 *
 * `model.parameters()` / `named_parameters()` stay unknown to everything else (their tensors are not modelled); the
 * value only remembers whose parameters they are. An optimizer is a library call whose path names an optimizer
 * (`torch.optim.AdamW`, `bitsandbytes.optim.AdamW8bit`, `apex.optimizers.FusedAdam`, ZeroRedundancyOptimizer…),
 * given them directly or in param groups (`[{"params": model.parameters(), "weight_decay": 0.1}]`).
 */
import type { Interp } from './interpreter';
import { native, type Value } from './values';

/** Whose parameters a `parameters()` result holds. */
const owners = new WeakMap<Value, Value>();

/** `model.parameters` as a method: each call an unknown that remembers `model`. */
export function parametersMethod(model: Value, name: string): Value {
  return native(name, () => {
    const params: Value = { k: 'unknown', why: `${name}() of a model: its tensors are not modelled` };
    owners.set(params, model);
    return params;
  });
}

const OPTIMIZER_PATH = /(^|\.)(optim|optimizers?)\.|Optimizer$|(Adam|SGD|Lion|Adafactor|Lamb|LAMB|Sophia|Muon)\w*$/;

/** The models whose parameters `value` holds: directly, or as the `params` of param groups. */
function modelsIn(value: Value | undefined): Value[] {
  if (!value) return [];
  const owner = owners.get(value);
  if (owner) return [owner];
  if (value.k === 'list' || value.k === 'tuple') return value.items.flatMap(modelsIn);
  if (value.k === 'dict') return modelsIn(value.map.get('s:params')?.[1]);
  return [];
}

/** Records the models an optimizer constructor is given as trained; `path` is the called library path. */
export function recordOptimizedModels(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>): void {
  if (!OPTIMIZER_PATH.test(path)) return;
  for (const model of modelsIn(args[0] ?? kwargs.get('params'))) if (!interp.trainedModels.includes(model)) interp.trainedModels.push(model);
}
