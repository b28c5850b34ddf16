/**
 * The two offload dimensions (the optimizer state; the parameters and gradients as well) for formats whose one
 * switch says both: FSDP's CPUOffload(offload_params=True) (accelerate's fsdp_offload_params, Lightning's
 * FSDPStrategy(cpu_offload=True), the Trainer's fsdp "offload", torchtitan's enable_cpu_offload) moves parameters,
 * gradients and optimizer state together and steps the optimizer on the CPU. It has no optimizer-only offload, so a
 * plan with one is said (cannot-express), never "fixed" into FSDP's heavier offload.
 */
import type { TrainingSetup } from '../protocol/plan';
import type { SetupDim, StatedSetup } from './setup';
import type { TextEdit, TextRange } from './types';

export const FSDP_HAS_NO_OPTIMIZER_ONLY_OFFLOAD = "FSDP's offload moves the parameters and gradients with the optimizer state; it has no optimizer-only offload: plan with --offload params to price FSDP's offload, or train the optimizer-only offload with DeepSpeed (offload_optimizer)";

/** Whether one switch for both offloads can say the plan's: everything offloaded, or nothing. */
export const offloadsTogether = (plan: TrainingSetup): boolean => plan.cpuOffload === plan.paramOffload;

/**
 * States both offload dimensions from one switch. Both share one `write`, which a fix runs once. `instead` says
 * what to do when the plan offloads the optimizer state alone.
 */
export function stateJointOffload(
  stated: StatedSetup, on: boolean, isStated: boolean, range: TextRange,
  write: ((on: boolean) => TextEdit[] | undefined) | undefined, instead = FSDP_HAS_NO_OPTIMIZER_ONLY_OFFLOAD,
): void {
  const dim = (): SetupDim<boolean> => ({ value: on, stated: isStated, range, ...(write ? { set: write } : {}), expressible: offloadsTogether });
  stated.cpuOffload = dim();
  stated.paramOffload = dim();
  stated.inexpressible.cpuOffload = instead;
  stated.inexpressible.paramOffload = instead;
}
