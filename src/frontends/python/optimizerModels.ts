/**
 * A model an optimizer steps is a model the script trains: `opt = torch.optim.AdamW(model.parameters(), lr=…)` in a
 * plain training loop says which of the models a `main()` builds is trained, as handing it to a Trainer or DDP does
 * (trainingWrappers.ts). Without it, a loop that neither wraps nor returns its model had no model at all ("no model
 * found"), though every PyTorch training loop builds its optimizer from the model's parameters.
 *
 * `model.parameters()` / `named_parameters()` are lists of parameters that remember the model they were listed from
 * (moduleListings.ts). An optimizer is a library call whose path names an optimizer (`torch.optim.AdamW`,
 * `bitsandbytes.optim.AdamW8bit`, `apex.optimizers.FusedAdam`, ZeroRedundancyOptimizer…), given them directly or in
 * param groups (`[{"params": model.parameters(), "weight_decay": 0.1}]`), however the script sorted them into groups.
 */
import type { Interp } from './interpreter';
import { listingOwner } from './moduleListings';
import type { Value } from './values';

const OPTIMIZER_PATH = /(^|\.)(optim|optimizers?)\.|Optimizer$|(Adam|SGD|Lion|Adafactor|Lamb|LAMB|Sophia|Muon)\w*$/;

/** The models whose parameters `value` holds: directly, or as the `params` of param groups. */
function modelsIn(value: Value | undefined): Value[] {
  if (!value) return [];
  const owner = listingOwner(value);
  if (owner) return [owner];
  if (value.k === 'list' || value.k === 'tuple') return [...new Set(value.items.flatMap(modelsIn))];
  if (value.k === 'dict') return modelsIn(value.map.get('s:params')?.[1]);
  return [];
}

/** Records the models an optimizer constructor is given as trained; `path` is the called library path. */
export function recordOptimizedModels(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>): void {
  if (!OPTIMIZER_PATH.test(path)) return;
  for (const model of modelsIn(args[0] ?? kwargs.get('params'))) if (!interp.trainedModels.includes(model)) interp.trainedModels.push(model);
}
