/**
 * Whether a config's framework accumulates ZeRO-2/3's gradients unsharded over the micro-steps before an optimizer
 * step (FSDP under no_sync: PlanOptions.unshardedAccumulationStages) or reduce-scatters every micro-step, as the
 * config readers state it beside the framework's other collective timings (frameworkTimings.ts). What each framework
 * does, from its source:
 * - accelerate: `Accelerator.accumulate(model)` enters `self.no_sync(model)` on every micro-step that is not a sync
 *   step unless the GradientAccumulationPlugin's `sync_each_batch` is set (accelerator.py accumulate, _do_sync), and
 *   `no_sync` calls the model's own `no_sync` where it has one (`getattr(model, "no_sync", nullcontext)`). FSDP1's
 *   FullyShardedDataParallel has one ("FSDP will accumulate the full model gradients (instead of gradient shards)
 *   until the eventual sync", torch fully_sharded_data_parallel.py); FSDP2's fully_shard modules do not (FSDPModule
 *   has set_requires_gradient_sync instead, torch _fully_shard.py), so under FSDP2 accelerate reduces every micro-step.
 *   `sync_each_batch`'s docstring: "Setting to True may reduce memory requirements when using gradient accumulation
 *   with distributed training, at expense of speed" (accelerate utils/dataclasses.py GradientAccumulationPlugin).
 * - the HF Trainer: its inner loop runs every micro-step but the last under `accelerator.no_sync(model)` (except
 *   under DeepSpeed), and newer releases skip that when accelerator_config's gradient_accumulation_kwargs
 *   sync_each_batch is set (transformers trainer.py _inner_training_loop). Its FSDP version is fsdp_config's
 *   "version": 1 by default in transformers 4.x, 2 in 5.x (training_args.py `self.fsdp_config.get("version", …)`).
 * - Lightning's Trainer: accumulate_grad_batches blocks the sync through ParallelStrategy.block_backward_sync, which
 *   pauses only a DistributedDataParallel model (lightning/pytorch/strategies/parallel.py); FSDPStrategy does not
 *   override it, so FSDP reduces every micro-batch (Fabric's _FSDPBackwardSyncControl is for `fabric.no_backward_sync`).
 * - torchtitan: train_step runs forward_backward_step per micro-batch with no no_sync (torchtitan/train.py).
 * - DeepSpeed ZeRO-2/3 reduce each micro-step's buckets into the partitioned gradients: the planner's default.
 */
import type { ZeroStage } from '../protocol/plan';

export interface StatedUnshardedAccumulation {
  /** The ZeRO stages whose micro-steps before the last keep full gradients; [] where every micro-step reduce-scatters. */
  stages: ZeroStage[];
  /** Why, for the plan's report: the framework and what it does. */
  why: string;
  /** Said by the run's own arguments or code (sync_each_batch): a launcher's config beside them does not undo it. */
  syncEachBatch?: true;
}

/** FSDP's ZeRO-2 (SHARD_GRAD_OP) and ZeRO-3 (FULL_SHARD, HYBRID_SHARD): the stages that shard gradients. */
const SHARDED_GRADIENT_STAGES: ZeroStage[] = [2, 3];

/** What a config that names its framework but not its accumulation says: every micro-step reduce-scatters. */
export const REDUCED_EACH_MICRO_STEP: StatedUnshardedAccumulation = { stages: [], why: 'each micro-step reduce-scatters its gradients (no no_sync)' };

/** sync_each_batch=True, in the Trainer's accelerator_config or accelerate's GradientAccumulationPlugin. */
export const SYNC_EACH_BATCH: StatedUnshardedAccumulation = { stages: [], why: 'sync_each_batch: every micro-step reduce-scatters, no no_sync', syncEachBatch: true };

export const LIGHTNING_FSDP_ACCUMULATION: StatedUnshardedAccumulation = { stages: [], why: "Lightning's FSDPStrategy: accumulate_grad_batches pauses only DDP's sync, so FSDP reduce-scatters every micro-batch" };

export const TORCHTITAN_ACCUMULATION: StatedUnshardedAccumulation = { stages: [], why: 'torchtitan reduce-scatters every gradient-accumulation micro-batch (no no_sync in its train_step)' };

/**
 * accelerate running FSDP (`fsdpVersion` as its config or the Trainer's fsdp_config says): FSDP1 under no_sync on the
 * micro-steps before the last, FSDP2 reducing each. `who`: what enters no_sync ("accelerate's accumulate()").
 */
export function accelerateFsdpAccumulation(fsdpVersion: number, who: string): StatedUnshardedAccumulation {
  if (fsdpVersion >= 2) return { stages: [], why: `${who} with FSDP2: accelerate's no_sync looks for the model's no_sync(), which fully_shard modules lack, so every micro-step reduce-scatters` };
  return { stages: SHARDED_GRADIENT_STAGES, why: `${who} with FSDP1: the micro-steps before the last run under no_sync(), keeping the full gradients until one reduce-scatter (sync_each_batch=True reduces each)` };
}

/** A `sync_each_batch` the text sets to a literal bool (JSON, YAML, Python or a command line's JSON string); the last one said wins. */
export function syncEachBatchIn(text: string): boolean | undefined {
  let found: boolean | undefined;
  for (const m of text.matchAll(/\bsync_each_batch\\?["']?\s*[:=]\s*["']?(true|false)\b/gi)) found = m[1]!.toLowerCase() === 'true';
  return found;
}

/**
 * The FSDP version the Trainer's fsdp_config states: its "version" key (transformers strips the fsdp_ prefix, so
 * "fsdp_version" says it too), as JSON, YAML or a Python dict writes it. Only read where the text names fsdp_config.
 */
export function trainerFsdpVersionIn(text: string): number | undefined {
  if (!/fsdp_config/.test(text)) return undefined;
  let found: number | undefined;
  for (const m of text.matchAll(/(?:^|[\s{,"'\\])(?:fsdp_)?version\\?["']?\s*[:=]\s*["']?([12])\b/gm)) found = Number(m[1]);
  return found;
}

/**
 * The Trainer with FSDP, read from the text that holds its arguments: sync_each_batch turns no_sync off; a stated
 * FSDP2 reduces every micro-step; FSDP1, stated or transformers 4.x's default, accumulates unsharded. transformers 5
 * defaults to FSDP2: unstated, the version is the installed library's, and the unsharded one is priced (the memory
 * that a run under FSDP1 needs), said so.
 */
export function trainerFsdpAccumulation(text: string): StatedUnshardedAccumulation {
  if (syncEachBatchIn(text)) return { ...SYNC_EACH_BATCH, why: "the Trainer's accelerator_config sets sync_each_batch: every micro-step reduce-scatters" };
  const version = trainerFsdpVersionIn(text);
  const stated = accelerateFsdpAccumulation(version ?? 1, "the Trainer's accumulation");
  if (version !== undefined) return stated;
  return { ...stated, why: `${stated.why}; fsdp_config states no version: transformers 4.x runs FSDP1, 5.x FSDP2, which reduces every micro-step ("version": 2 says so)` };
}
