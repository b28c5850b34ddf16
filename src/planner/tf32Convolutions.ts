/**
 * Whether an fp32 plan's convolutions run on TF32 tensor cores, as the framework runs them by default, and the line
 * that says so. PyTorch: `torch.backends.cudnn.allow_tf32` is True by default while matmul TF32 is off since 1.12
 * (PyTorch docs, CUDA semantics, "TensorFloat-32 (TF32) on Ampere (and later) devices"). TensorFlow and Keras:
 * TF32 is on by default since TF 2.4 (`tf.config.experimental.enable_tensor_float_32_execution`). TensorFlow.js
 * states no such default, so its convolutions stay fp32, as do those of code that sets
 * `torch.backends.cudnn.allow_tf32 = False` (RunPrecision.convolutionsWithoutTf32).
 */
import type { AnalyzedModel } from '../core/ir';
import type { Precision } from '../protocol/plan';
import type { GpuSpec } from './cluster/spec';
import { hasTf32TensorCores } from './memory/precision';

const DEFAULT_SOURCE: Partial<Record<AnalyzedModel['framework'], string>> = {
  pytorch: "PyTorch's default, torch.backends.cudnn.allow_tf32 = True",
  keras: "TensorFlow's default since 2.4",
  'keras-json': "TensorFlow's default since 2.4",
};

/**
 * Whether the plan's convolutions run on TF32, the line that says so, and their share of the model's FLOPs: MFU is
 * measured against the peak the FLOPs run at, TF32's for that share and fp32's for the rest (setupReport.ts).
 */
export function tf32Convolutions(model: AnalyzedModel, precision: Precision, gpus: readonly GpuSpec[]): { on: boolean; line?: string; flopShare?: number } {
  const source = DEFAULT_SOURCE[model.framework];
  if (precision !== 'fp32' || !source) return { on: false };
  const convolutions = model.layers.filter((l) => l.op === 'conv' || l.op === 'separable_conv');
  const cores = gpus.filter(hasTf32TensorCores);
  const switchedOff = model.runPrecision?.convolutionsWithoutTf32;
  if (switchedOff) {
    const line = convolutions.length && cores.length ? `fp32: the ${convolutions.length} convolutions stay off ${cores[0]!.name}'s TF32 tensor cores: the code turns TF32 off for them (${switchedOff})` : undefined;
    return { on: false, ...(line ? { line } : {}) };
  }
  if (convolutions.length === 0 || cores.length === 0) return { on: true };
  const flops = (layers: typeof model.layers) => layers.reduce((sum, l) => sum + l.workload.forwardFlops + l.workload.backwardFlops, 0);
  const total = flops(model.layers);
  const flopShare = total > 0 ? flops(convolutions) / total : 0;
  const matmuls = model.framework === 'pytorch' ? '; matmuls stay fp32 (TF32 for them too: --precision tf32)' : '';
  return { on: true, flopShare, line: `fp32: the ${convolutions.length} convolutions (${Math.round(flopShare * 100)}% of the FLOPs) run on ${cores[0]!.name}'s TF32 tensor cores (${source})${matmuls}` };
}
