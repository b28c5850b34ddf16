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
import { parameterGroups } from './freezeLoops';
import { listingOwner, listingPart } from './moduleListings';
import { noteForPlans } from './runFacts';
import { descendants } from './torchModuleValues';
import type { CallSite, InstV, ModV, Value } from './values';

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

/** Per model, the parts whose parameters `value` holds: the model itself where a listing of it is there whole. */
function partsIn(value: Value | undefined, out = new Map<Value, Set<Value>>()): Map<Value, Set<Value>> {
  if (!value) return out;
  const owner = listingOwner(value);
  if (owner) {
    const parts = out.get(owner) ?? new Set<Value>();
    parts.add(listingPart(value) ?? owner);
    out.set(owner, parts);
  } else if (value.k === 'list' || value.k === 'tuple') for (const item of value.items) partsIn(item, out);
  else if (value.k === 'dict') partsIn(value.map.get('s:params')?.[1], out);
  return out;
}

/** Records the models an optimizer constructor is given as trained; `path` is the called library path. */
export function recordOptimizedModels(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  if (!OPTIMIZER_PATH.test(path)) return;
  const params = args[0] ?? kwargs.get('params');
  for (const model of modelsIn(params)) if (!interp.trainedModels.includes(model)) interp.trainedModels.push(model);
  for (const [model, parts] of partsIn(params)) noteUnstepped(interp, model, parts, path, site);
}

/**
 * An optimizer over parts of a model (`SGD(model.fc.parameters())`) while the rest still requires grad: those
 * parameters get gradients (and DDP syncs them) but no optimizer state and no update. WAP plans every trainable
 * parameter as stepped, so the plan overstates optimizer memory and update time: said, with the fix that makes the
 * run match it. Nothing to say where the rest is frozen (the fine-tuning recipe) or the whole model is listed.
 */
function noteUnstepped(interp: Interp, model: Value, parts: Set<Value>, path: string, site: CallSite): void {
  if (parts.has(model) || (model.k !== 'mod' && model.k !== 'inst')) return;
  const stepped = new Set<Value>([...parts].flatMap((p) => descendants(p)));
  const left = parameterGroups(model as ModV | InstV).filter((g) => !g.module.frozen && !stepped.has(g.module));
  if (left.length === 0) return;
  const names = left.slice(0, 3).map((g) => `\`${g.path || '(root)'}\``).join(', ');
  const more = left.length > 3 ? ` and ${left.length - 3} more` : '';
  const optimizer = path.slice(path.lastIndexOf('.') + 1);
  noteForPlans(interp, site.range, `${optimizer} steps only part of the model; ${names}${more} still require grad, so they get gradients (synced under data parallelism) but no optimizer state or update: the plan prices them as stepped, overstating optimizer memory and update time (freeze them with requires_grad_(False) to train as planned)`, 'optimizer-part', 'warning');
}
