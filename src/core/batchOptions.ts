/**
 * The names training code gives the samples one process takes per forward and the micro-steps it accumulates before
 * an optimizer step: transformers' `per_device_train_batch_size` and `gradient_accumulation_steps`, Megatron-LM's
 * `micro_batch_size`, DeepSpeed's `train_micro_batch_size_per_gpu`, nanoGPT's and most loops' `batch_size`, Lightning's
 * `accumulate_grad_batches`. In priority order: a script with both `per_device_train_batch_size` and `batch_size`
 * trains on the first. One list, so the script reader and the config reader name the same things.
 */
export const MICRO_BATCH_NAMES: readonly string[] = ['per_device_train_batch_size', 'train_micro_batch_size_per_gpu', 'micro_batch_size', 'device_batch_size', 'batch_size'];

export const ACCUMULATION_NAMES: readonly string[] = ['gradient_accumulation_steps', 'grad_accum_steps', 'grad_accum', 'accumulation_steps', 'accum_steps', 'accumulate_grad_batches'];

/**
 * What a script divides by when it splits a whole-run number over its processes: nanoGPT's
 * `gradient_accumulation_steps //= ddp_world_size`, the ImageNet example's `args.batch_size / ngpus_per_node`.
 */
export const PROCESS_COUNT = /world_size|num_processes|\bn_?gpus|num_gpus|gpus_per_node|nprocs?\b|nproc_per_node|device_count|num_replicas/i;

/** Code that accumulates gradients under some other name or mechanism (`accum_iter`, DDP's `no_sync()`). */
export const OTHER_ACCUMULATION = /accum|\bno_sync\s*\(|set_requires_gradient_sync/i;
