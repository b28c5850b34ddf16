/**
 * What a script asks torch.cuda about the machine it runs on. WAP plans GPU training, so `torch.cuda.is_available()`
 * is True in the run (`device = 'cuda' if torch.cuda.is_available() else 'cpu'` is the GPU). What the GPU can do
 * (`is_bf16_supported()`, its compute capability, its name) depends on the GPU the plan is for, which the model's
 * reading does not know: a choice made on it is the run's, never guessed from the first branch. nanoGPT picks its
 * dtype this way, bfloat16 on Ampere and later, float16 on a V100.
 */
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { TRUE, type Value } from './values';

/** torch.cuda's answer WAP knows for a GPU run, or undefined. */
export function cudaQuery(path: string): Value | undefined {
  return path === 'torch.cuda.is_available' ? TRUE : undefined;
}

const ASKS_THE_GPU = /\b(is_bf16_supported|get_device_capability|get_device_properties|get_device_name)\s*\(/;

/** Whether an undecided condition turns on what the run's GPU can do, so its branches must stay undecided. */
export function asksTheGpu(interp: Interp, condition: PyNode): boolean {
  return ASKS_THE_GPU.test(interp.text(condition));
}
