/**
 * Whether a plain PyTorch FSDP script accumulates its gradients unsharded (unshardedAccumulation.ts): its loop pauses
 * FSDP's reduce-scatter on the micro-steps before the optimizer's with FSDP1's `model.no_sync()` ("gradients will be
 * accumulated in module variables, which will later be synchronized in the first forward-backward pass after exiting
 * the context … FSDP will accumulate the full model gradients (instead of gradient shards)", torch
 * fully_sharded_data_parallel.py) or FSDP2's `model.set_requires_gradient_sync(False)` (the unsharded gradients stay
 * on the unsharded parameters, in the reduce dtype, until a backward with it True: _fsdp_param_group.py
 * post_backward). Such a call wherever the script makes it is the accumulation: a loop calls it on the micro-steps
 * before the last, so a guard around it is expected, not a sign the run may skip it. No such call: FSDP
 * reduce-scatters every backward. FSDP2's `set_reshard_after_backward(False)` also keeps the gathered parameters
 * between micro-steps, which the plan does not price: said.
 *
 * A DDP script's loop: DDP's reducer all-reduces the gradients of every backward run while the wrapper's
 * `require_backward_grad_sync` is True (torch nn/parallel/distributed.py forward: prepare_for_backward), which
 * `no_sync()` sets False for its body ("gradients will be accumulated on module variables, which will later be
 * synchronized in the first forward-backward pass exiting the context") and nanoGPT sets itself
 * (`model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)`). A loop that accumulates
 * (reads an accumulation count: gradient_accumulation_steps, MAE's accum_iter, open_clip's accum_freq…) and does
 * neither all-reduces on every micro-step (PlanOptions.allReduceEachMicroStepStages); one that does either syncs once.
 */
import type { Node } from 'web-tree-sitter';
import { nodeRange } from './python';
import type { StatedSetup } from './setup';
import type { ScriptContext } from './torchScriptSetup';
import type { Wrapper } from './torchScriptSharding';
import { REDUCED_EACH_MICRO_STEP } from './unshardedAccumulation';

/** The method a call invokes on some object (`model.no_sync()` → 'no_sync'), else undefined. */
function methodOf(call: Node): string | undefined {
  const fn = call.childForFieldName('function');
  return fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
}

/** The call's first argument as written, else undefined. */
function firstArgument(call: Node): Node | undefined {
  const args = call.childForFieldName('arguments');
  return args?.namedChildren.find((c): c is Node => !!c && c.type !== 'comment');
}

const lineOf = (n: Node): number => n.startPosition.row + 1;

/** An accumulation count as scripts name it (core/batchOptions.ts ACCUMULATION_NAMES and the like); not `loss_accum`. */
const ACCUMULATION_COUNT = /^(?:grad(?:ient)?_accum\w*|\w*accum(?:ulat(?:e|ion))?_(?:steps?|iters?|freq|every|batches|grad_batches))$/i;

/** Whether an identifier is written, not read: the target of `x = …` / `x += …` or a loop's variable. */
function written(id: Node): boolean {
  const parent = id.parent;
  if (!parent) return false;
  const target = parent.type === 'assignment' || parent.type === 'augmented_assignment' ? parent.childForFieldName('left') : parent.type === 'for_statement' ? parent.childForFieldName('left') : undefined;
  return target?.startIndex === id.startIndex && target.endIndex === id.endIndex;
}

const inLoop = (node: Node): boolean => {
  for (let n = node.parent; n; n = n.parent) if (n.type === 'for_statement' || n.type === 'while_statement') return true;
  return false;
};

/** The first accumulation count a loop reads (`range(gradient_accumulation_steps)`, `% args.accum_iter`), else undefined. */
function accumulationCountInLoop(ctx: ScriptContext): Node | undefined {
  return ctx.root.descendantsOfType('identifier').find((id): id is Node => !!id && ACCUMULATION_COUNT.test(id.text) && !written(id) && inLoop(id));
}

/**
 * Where a DDP script pauses its sync: a `no_sync` it calls or hands on (`model.no_sync() if not last else
 * nullcontext()`), or an assignment to `require_backward_grad_sync` other than a plain True, which only resumes.
 */
function ddpSyncPause(ctx: ScriptContext): { node: Node; how: string } | undefined {
  const noSync = ctx.root.descendantsOfType('attribute').find((a): a is Node => !!a && a.childForFieldName('attribute')?.text === 'no_sync');
  if (noSync) return { node: noSync, how: 'enters no_sync()' };
  const flag = ctx.root.descendantsOfType('assignment').find((a): a is Node => {
    const left = a?.childForFieldName('left');
    return left?.type === 'attribute' && left.childForFieldName('attribute')?.text === 'require_backward_grad_sync' && a!.childForFieldName('right')?.type !== 'true';
  });
  return flag ? { node: flag, how: `sets ${flag.childForFieldName('left')!.text}` } : undefined;
}

/**
 * Sets `stated.microStepAllReduce` for a script that wraps its model in DDP: every micro-step all-reducing where the
 * loop accumulates without pausing the sync, once where it pauses it; nothing where it does not accumulate.
 */
function readDdpAccumulation(ctx: ScriptContext, stated: StatedSetup): void {
  // ZeroRedundancyOptimizer without DistributedDataParallel has no reducer to all-reduce each backward.
  if (!ctx.calls.get('DistributedDataParallel')?.length) return;
  const pause = ddpSyncPause(ctx);
  if (pause) {
    stated.microStepAllReduce = { stages: [], why: `line ${lineOf(pause.node)} ${pause.how}: the micro-steps before the last accumulate locally, the last all-reduces` };
    return;
  }
  const count = accumulationCountInLoop(ctx);
  if (!count) return;
  const backward = ctx.allCalls.find((c) => methodOf(c) === 'backward' && inLoop(c));
  stated.microStepAllReduce = {
    stages: [0, 1],
    why: `the loop accumulates over ${count.text} (line ${lineOf(count)}) but never enters model.no_sync() nor sets require_backward_grad_sync: DDP all-reduces on every micro-step's backward${backward ? ` (line ${lineOf(backward)})` : ''}`,
  };
}

/**
 * Sets `stated.unshardedAccumulation` for an FSDP1 or FSDP2 script from the calls that pause its gradient sync, and
 * `stated.microStepAllReduce` for a DDP script.
 */
export function readScriptAccumulation(ctx: ScriptContext, wrapper: Wrapper | undefined, stated: StatedSetup): void {
  if (wrapper === 'ddp') readDdpAccumulation(ctx, stated);
  if (wrapper !== 'fsdp' && wrapper !== 'fsdp2') return;
  const pauses = ctx.allCalls.filter((c) => {
    const method = methodOf(c);
    if (wrapper === 'fsdp') return method === 'no_sync';
    // set_requires_gradient_sync(True) alone resumes; anything else (False, `not last`, a variable) pauses some steps.
    return method === 'set_requires_gradient_sync' && firstArgument(c)?.type !== 'true';
  });
  if (pauses.length === 0) {
    const paused = wrapper === 'fsdp' ? 'model.no_sync()' : 'set_requires_gradient_sync(False)';
    stated.unshardedAccumulation = { ...REDUCED_EACH_MICRO_STEP, why: `the script never calls ${paused}: FSDP reduce-scatters every backward's gradients` };
    return;
  }
  const first = pauses[0]!;
  stated.unshardedAccumulation = {
    stages: [2, 3],
    why: `line ${lineOf(first)} ${wrapper === 'fsdp' ? 'enters no_sync()' : 'calls set_requires_gradient_sync(False)'}: the micro-steps before the last keep the full gradients until one reduce-scatter`,
  };
  const keep = ctx.allCalls.find((c) => methodOf(c) === 'set_reshard_after_backward' && firstArgument(c)?.type !== 'true');
  if (wrapper === 'fsdp2' && keep) {
    (stated.unmodelled ??= []).push({
      range: nodeRange(keep), short: 'parameters kept gathered between micro-steps not modelled',
      message: 'set_reshard_after_backward(False) keeps each unit\'s gathered parameters after its backward, so the next micro-step gathers nothing: the plan still prices ZeRO-3\'s gathers every micro-step and its memory without the held parameters',
    });
  }
}
