/**
 * The micro-batch and gradient accumulation of a plain PyTorch training loop, read only where the script states
 * them as literals: `DataLoader(…, batch_size=N)` (or a module-level `batch_size = N` the loader uses; absent,
 * torch's default 1), and a module-level `gradient_accumulation_steps = N` (grad_accum, accumulation_steps…) the
 * loop reads. A loop whose accumulation WAP cannot read states neither: a micro-batch without its accumulation
 * would state a wrong global batch, worse than none. Values from argparse, a config file the script executes
 * (nanoGPT's configurator.py) or arithmetic are the run's.
 */
import type { Node } from 'web-tree-sitter';
import { atModuleLevel, guardOf, intLiteral, nodeRange, readInLoop, replaceRange, singleAssignment } from './python';
import type { SetupDim, StatedSetup } from './setup';
import type { ScriptContext } from './torchScriptSetup';
import type { TextRange } from './types';

import { ACCUMULATION_NAMES, OTHER_ACCUMULATION } from '../core/batchOptions';

/** Code that rewrites a script's globals as it runs: a module-level literal is then only a default. */
const REWRITES_GLOBALS = /\bexec\s*\(|\bglobals\s*\(\s*\)/;

/** A literal count ≥ 1 that holds when the loop runs: written in the call, or assigned once at module level. */
function literalCount(ctx: ScriptContext, value: Node, call?: Node): { value: number; range: TextRange } | undefined {
  const n = intLiteral(value);
  if (n === undefined || n < 1) return undefined;
  const inCall = call !== undefined && value.startIndex >= call.startIndex && value.endIndex <= call.endIndex;
  if (!inCall) {
    const assignment = value.parent;
    if (!assignment || assignment.type !== 'assignment' || !atModuleLevel(assignment) || REWRITES_GLOBALS.test(ctx.text)) return undefined;
  }
  return { value: n, range: nodeRange(value) };
}

/** The accumulation the loop uses: its literal, 1 where the script shows no accumulation at all, else undefined. */
function readAccumulation(ctx: ScriptContext, anchor: TextRange): SetupDim<number> | undefined {
  for (const name of ACCUMULATION_NAMES) {
    if (!readInLoop(ctx.root, name)) continue;
    const assigned = singleAssignment(ctx.root, name);
    const count = assigned && literalCount(ctx, assigned.value);
    return count && { value: count.value, stated: true, range: count.range, set: (n) => replaceRange(count.range, String(n)) };
  }
  // Some other spelling (`accum_iter`, `no_sync()` around micro-steps) accumulates in a way WAP does not read.
  if (OTHER_ACCUMULATION.test(ctx.text)) return undefined;
  return { value: 1, stated: false, range: anchor };
}

/** The loader the loop trains from: the only DataLoader, else the one assigned to a name with "train" in it. */
function trainLoader(ctx: ScriptContext): Node | undefined {
  const loaders = ctx.calls.get('DataLoader') ?? [];
  if (loaders.length === 1) return loaders[0];
  const named = loaders.filter((call) => call.parent?.type === 'assignment' && /train/i.test(call.parent.childForFieldName('left')?.text ?? ''));
  return named.length === 1 ? named[0] : undefined;
}

export function readBatch(ctx: ScriptContext, stated: StatedSetup): void {
  const accumulation = readAccumulation(ctx, stated.anchor);
  const loader = trainLoader(ctx);
  const site = loader && ctx.keywords(loader);
  // A loader built behind a flag, or one whose batches a batch_sampler makes, says no batch size here.
  if (!accumulation || !loader || !site || guardOf(loader) || site.get('batch_sampler')) return;
  const given = site.get('batch_size') ?? site.positional[1];
  let micro: SetupDim<number> | undefined;
  if (!given) {
    // torch's DataLoader default: batches of one sample.
    if (!site.hidden) micro = { value: 1, stated: false, range: nodeRange(loader), set: (n) => site.write('batch_size', String(n)) };
  } else {
    const count = literalCount(ctx, given, loader);
    if (count) micro = { value: count.value, stated: true, range: count.range, set: (n) => replaceRange(count.range, String(n)) };
  }
  if (!micro) return;
  stated.microBatch = micro;
  stated.gradientAccumulation = accumulation;
}
