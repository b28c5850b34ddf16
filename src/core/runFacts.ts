/**
 * What the code that trains a model states about the run, beside the model itself: its batch, the process counts
 * its asserts accept, and its precision. Frontends read them (frontends/python/runFacts.ts); the planner uses them
 * where no flag, setting or training config says otherwise. ModelSpec carries them (ir.ts).
 */
import type { TensorHolding, TrainingPrecision } from './trainingPrecision';

/**
 * Samples a training step takes: over the whole run (`perProcess` false, the global batch), or per process (micro-batch
 * × accumulation, which the launch's replicas multiply). `source` says which values made it.
 */
export interface RunBatch {
  samples: number;
  perProcess: boolean;
  source: string;
  /**
   * The samples one process takes per forward, where the code fixes it (`batch_size 12`, a DeepSpeed config's
   * train_micro_batch_size_per_gpu): the plan's micro-batch is compared with it (planner/codeMicroBatch.ts).
   */
  perForward?: { samples: number; said: string };
}

/**
 * A script's assert on its process count n: it starts only where `dividend % (factor × n) == 0`. nanoGPT's
 * `gradient_accumulation_steps % ddp_world_size == 0` is dividend 40, factor 1; llm.c's token budget over
 * `B * T * ddp_world_size` has factor B × T. `said` names the assert, its line and its numbers.
 */
export interface ProcessCountRule {
  dividend: number;
  factor: number;
  said: string;
}

/**
 * A precision the training code states, how it holds 16-bit tensors, and where it says so. Without a precision the
 * code states only the holding (an autocast whose dtype the run picks by GPU).
 */
export interface RunPrecision {
  precision?: TrainingPrecision;
  holding?: TensorHolding;
  source: string;
  /**
   * Where the code turns cuDNN's TF32 off (`torch.backends.cudnn.allow_tf32 = False`): fp32 convolutions then run at
   * the fp32 rate, not on the TF32 tensor cores PyTorch uses by default (planner/tf32Convolutions.ts).
   */
  convolutionsWithoutTf32?: string;
}
