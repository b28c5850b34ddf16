/**
 * What a plain PyTorch training script says about its training setup when it wraps the model itself (FSDP,
 * fully_shard, DDP): sharding and offload (torchScriptSharding.ts), precision (torchScriptPrecision.ts),
 * micro-batch and accumulation (torchScriptBatch.ts), and here recompute and the degrees a script only reaches
 * through torch's DTensor APIs. Reads while the tree is alive; every `set` closure holds offsets and strings only.
 */
import type { Node } from 'web-tree-sitter';
import type { RecomputeMode } from '../protocol/plan';
import { callKeywords, type CallKeywords } from './callKeywords';
import { guardOf, nodeRange } from './python';
import type { SetupKey, StatedSetup } from './setup';
import { torchNames, type TorchNames } from './torchNames';
import { readBatch } from './torchScriptBatch';
import { readPrecision } from './torchScriptPrecision';
import { readSharding, WRAPPER_LABEL, WRAPPERS, wrapperOf } from './torchScriptSharding';
import { readScriptAccumulation } from './torchScriptAccumulation';
import { MalformedConfig } from './types';

/** The script as the readers see it: its text, tree, torch imports, and calls by torch's name for them. */
export interface ScriptContext {
  root: Node;
  text: string;
  names: TorchNames;
  /** The calls of torch APIs, by torch's name (`FullyShardedDataParallel` for the script's `FSDP(…)`). */
  calls: Map<string, Node[]>;
  allCalls: Node[];
  /** A call's keywords, through names and unpacked dicts (callKeywords.ts); undefined without an argument list. */
  keywords(call: Node): CallKeywords | undefined;
}

/** The calls whose arguments the readers use: a half-typed one among them makes the setup unreadable. */
const READ = new Set([...Object.keys(WRAPPERS), 'ZeroRedundancyOptimizer', 'MixedPrecision', 'MixedPrecisionPolicy', 'CPUOffload', 'CPUOffloadPolicy', 'init_device_mesh', 'autocast', 'GradScaler', 'ShardedGradScaler', 'DataLoader', 'apply_activation_checkpointing', 'checkpoint_wrapper']);

const NO_DEGREES = 'a PyTorch script reaches tensor, pipeline and context parallelism only through parallelize_module, torch.distributed.pipelining and context_parallel: export the plan with `wap export --format torch-parallelize` and call its parallelize function';
const RECOMPUTE_IN_CODE = 'a PyTorch script switches activation checkpointing on in code: apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper, check_fn=lambda m: isinstance(m, Block)) (or checkpoint_wrapper around each block) recomputes every block; add or remove those calls';

/** Degrees a script sets through DTensor APIs WAP does not read: said, and left to the search rather than pinned off. */
const DEGREE_APIS: Array<{ keys: SetupKey[]; where: (ctx: ScriptContext) => Node | undefined; short: string; message: string }> = [
  {
    keys: ['tensorParallel', 'sequenceParallel'], where: (ctx) => ctx.calls.get('parallelize_module')?.[0], short: 'tensor parallelism not read',
    message: 'parallelize_module(…) splits layers over a tensor-parallel mesh WAP does not read from code: this config\'s plan leaves tensor and sequence parallelism to the search',
  },
  {
    keys: ['pipelineStages'], where: (ctx) => ctx.allCalls.find((c) => {
      const name = ctx.names.of(c) ?? '';
      return /^(PipelineStage|Schedule[A-Z]\w*)$/.test(name) || !!ctx.names.moduleOf(name)?.startsWith('torch.distributed.pipelining');
    }), short: 'pipeline parallelism not read',
    message: 'torch.distributed.pipelining splits the model into stages WAP does not read from code: this config\'s plan leaves pipeline parallelism to the search',
  },
  {
    keys: ['contextParallel'], where: (ctx) => ctx.calls.get('context_parallel')?.[0], short: 'context parallelism not read',
    message: 'context_parallel(…) shards the sequence over a mesh WAP does not read from code: this config\'s plan leaves context parallelism to the search',
  },
];

function scriptContext(root: Node, text: string): ScriptContext {
  const names = torchNames(root);
  const allCalls = root.descendantsOfType('call').filter((c): c is Node => !!c);
  const calls = new Map<string, Node[]>();
  for (const call of allCalls) {
    const name = names.of(call);
    if (name) calls.set(name, [...(calls.get(name) ?? []), call]);
  }
  const cache = new Map<number, CallKeywords | undefined>();
  const keywords = (call: Node): CallKeywords | undefined => {
    if (!cache.has(call.id)) cache.set(call.id, callKeywords(root, text, call));
    return cache.get(call.id);
  };
  return { root, text, names, calls, allCalls, keywords };
}

/**
 * Full recompute where the script wraps blocks in activation checkpointing (torch's checkpoint_wrapper, directly or
 * through apply_activation_checkpointing; transformers' gradient_checkpointing_enable), none where it does nothing
 * of the kind. torch.utils.checkpoint called in a forward, or a call behind a flag, is the run's: not stated.
 */
function readRecompute(ctx: ScriptContext, stated: StatedSetup): void {
  const wraps = [...(ctx.calls.get('apply_activation_checkpointing') ?? []), ...(ctx.calls.get('checkpoint_wrapper') ?? []),
    ...ctx.allCalls.filter((c) => /(^|\.)gradient_checkpointing_enable$/.test(c.childForFieldName('function')?.text ?? ''))];
  if (wraps.some((c) => guardOf(c))) return;
  const on = wraps.length > 0;
  if (!on && /\bcheckpoint(_sequential)?\s*\(/.test(ctx.text)) return;
  stated.recompute = {
    value: on ? 'full' : 'none', stated: on, range: wraps[0] ? nodeRange(wraps[0]) : stated.anchor,
    // Checkpointing wraps whole blocks: any recompute the plan chooses is "on" here. Adding or removing it is by hand.
    matches: (plan: RecomputeMode) => (plan !== 'none') === on,
    expressible: (plan) => (plan.recompute !== 'none') === on,
  };
  stated.inexpressible.recompute = RECOMPUTE_IN_CODE;
}

/**
 * The setup a script that wraps its model itself states. `strict`: a half-typed call the readers need throws
 * MalformedConfig (the check's one 'malformed-config' finding); otherwise such a script states nothing.
 */
export function readTorchScriptSetup(text: string, root: Node, strict: boolean): StatedSetup | undefined {
  const ctx = scriptContext(root, text);
  const broken = [...READ].flatMap((name) => ctx.calls.get(name) ?? []).find((c) => c.hasError);
  const first = Object.keys(WRAPPERS).map((n) => ctx.calls.get(n)?.[0]).find((c) => c) ?? ctx.calls.get('ZeroRedundancyOptimizer')?.[0];
  // No torch wrapper (fairscale's FSDP, or a wrapping call a syntax error swallowed): nothing is read.
  if (broken || (!first && root.hasError)) {
    if (!strict) return undefined;
    // Marked where the parser gave up, never over the whole file.
    const at = broken ?? root.descendantsOfType('ERROR')[0];
    throw new MalformedConfig(`Python: syntax error ${broken ? `inside the ${ctx.names.of(broken)}(…) call` : 'where the script wraps its model'}`, at ? nodeRange(at) : { start: 0, end: 0 });
  }
  if (!first) return undefined;
  const wrapper = wrapperOf(ctx);
  const stated: StatedSetup = {
    label: wrapper ? WRAPPER_LABEL[wrapper] : 'PyTorch training script', anchor: nodeRange(first),
    inexpressible: {},
  };
  readSharding(ctx, wrapper, stated);
  readScriptAccumulation(ctx, wrapper, stated);
  readPrecision(ctx, stated);
  readRecompute(ctx, stated);
  readBatch(ctx, stated);
  for (const key of ['tensorParallel', 'pipelineStages', 'contextParallel', 'sequenceParallel'] as const) stated.inexpressible[key] = NO_DEGREES;
  for (const api of DEGREE_APIS) {
    const at = api.where(ctx);
    if (!at) continue;
    for (const key of api.keys) delete stated.inexpressible[key];
    (stated.unmodelled ??= []).push({ range: nodeRange(at), short: api.short, message: api.message });
  }
  return stated;
}
