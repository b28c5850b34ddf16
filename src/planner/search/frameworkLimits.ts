/**
 * The setups a framework the user named can run (PlanOptions.frameworkLimits): both searches, the layer ladder and
 * the block-stack search, drop the ZeRO stages and CPU offloads it lacks, and a pin it cannot run is infeasible with
 * the framework's reason rather than planned as if another framework ran it.
 */
import type { ParallelPins, ZeroStage } from '../../protocol/plan';
import type { FrameworkLimits } from '../../protocol/planOptions';

export type OffloadKind = 'none' | 'optimizer' | 'params';

/** Whether the framework runs `zero` with that offload; every setup when none is named. */
export function frameworkRuns(limits: FrameworkLimits | undefined, zero: ZeroStage, offload: OffloadKind): boolean {
  if (!limits) return true;
  if (!limits.zeroStages.includes(zero)) return false;
  return offload === 'none' || (offload === 'optimizer' ? limits.optimizerOffload : limits.paramOffload);
}

/** The deepest ZeRO stage the framework runs: where the ladder's last resorts shard to. */
export function deepestZero(limits: FrameworkLimits | undefined): ZeroStage {
  return limits ? (Math.max(...limits.zeroStages) as ZeroStage) : 3;
}

/** Why the pins ask for what the framework cannot run; undefined when they do not. */
export function pinOutsideFramework(pins: ParallelPins, limits: FrameworkLimits | undefined): string | undefined {
  if (!limits) return undefined;
  if (pins.zeroStage !== undefined && !limits.zeroStages.includes(pins.zeroStage)) return `pin zeroStage=${pins.zeroStage}: ${limits.why}`;
  if (pins.paramOffload && !limits.paramOffload) return `pin paramOffload: ${limits.why}`;
  if (pins.cpuOffload && !limits.optimizerOffload) return `pin cpuOffload: ${limits.why}`;
  return undefined;
}
