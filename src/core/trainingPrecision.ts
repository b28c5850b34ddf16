/**
 * The precision a training stack's own words state, and how it holds 16-bit tensors: one table for the config reader
 * (configs/precisionHint.ts reads `Trainer(precision="bf16-mixed")` written literally) and the script reader
 * (frontends/python/runPrecision.ts, the same call with a value the run computes, `precision=cfg.trainer.precision`).
 * Lightning's words are its Trainer's `precision` (Lightning docs, "N-Bit Precision"): "-mixed" (and the bare 16/bf16
 * of Lightning 1.x) run torch.autocast over fp32 parameters; "-true" casts the module, and so its optimizer state.
 */
export type TrainingPrecision = 'fp32' | 'tf32' | 'fp16' | 'bf16' | 'fp8';
export type TensorHolding = 'autocast' | 'master-weights' | 'pure';

const LIGHTNING: Readonly<Record<string, TrainingPrecision>> = {
  // Lightning's double precision is planned as fp32, its nearest modelled precision.
  '64': 'fp32', '64-true': 'fp32', '32': 'fp32', '32-true': 'fp32', '16': 'fp16', '16-mixed': 'fp16', '16-true': 'fp16',
  bf16: 'bf16', 'bf16-mixed': 'bf16', 'bf16-true': 'bf16', 'transformer-engine': 'fp8', 'transformer-engine-float16': 'fp8',
};

/**
 * accelerate's `mixed_precision` words: its config key, `accelerate launch --mixed_precision` and `Accelerator(mixed_precision=…)`.
 * Without DeepSpeed or Megatron-LM under it, accelerate runs forward under torch.autocast over fp32 parameters.
 */
export const ACCELERATE_PRECISION: Readonly<Record<string, TrainingPrecision>> = { no: 'fp32', fp16: 'fp16', bf16: 'bf16', fp8: 'fp8' };

/** A Lightning Trainer's `precision` word (or number), or undefined for one Lightning does not take. */
export function lightningPrecision(word: string): { precision: TrainingPrecision; holding?: TensorHolding } | undefined {
  const w = word.trim().toLowerCase();
  const precision = LIGHTNING[w];
  if (!precision) return undefined;
  if (precision !== 'fp16' && precision !== 'bf16') return { precision };
  return { precision, holding: w.endsWith('-true') ? 'pure' : 'autocast' };
}
