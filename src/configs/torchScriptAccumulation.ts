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

/** Sets `stated.unshardedAccumulation` for an FSDP1 or FSDP2 script from the calls that pause its gradient sync. */
export function readScriptAccumulation(ctx: ScriptContext, wrapper: Wrapper | undefined, stated: StatedSetup): void {
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
