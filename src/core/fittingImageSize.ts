/**
 * The image size an unsized network is built for. Read without a size, an image model is assumed at 224×224
 * (inputDefaults.ts), ImageNet's. A network whose flatten feeds a Linear sized for another image (DeepSpeedExamples'
 * CIFAR net: Linear(16·5·5) after two conv-pool stages, a 32×32 input) has no shape there; its layers then say which
 * size they take. The sides tried are the public datasets' such networks train on, smallest first: MNIST's 28
 * (LeCun et al. 1998), CIFAR's 32 (Krizhevsky 2009), Tiny ImageNet's 64, STL-10's 96 (Coates et al. 2011), the 128 and
 * 256 of ImageNet's low-resolution and resize-then-crop pipelines, Inception v3's 299 (Szegedy et al. 2016), and the
 * 384 and 512 of fine-tuning at higher resolution. The first at which every layer has a shape is the input, said as
 * assumed with why; none, and the 224 reading stands with its shape error.
 */
import type { AnalyzedModel, ModelSpec } from './ir';
import { assumeInput } from './inputDefaults';

export const DATASET_IMAGE_SIDES: readonly number[] = [28, 32, 64, 96, 128, 256, 299, 384, 512];

const hasShapeError = (m: AnalyzedModel): boolean => m.diagnostics.some((d) => d.code === 'shape-error');

/** `first` (read at the assumed 224×224), or the model read at the first dataset size its layers agree with. */
export function withFittingImageSize(spec: ModelSpec, first: AnalyzedModel, analyze: (spec: ModelSpec) => AnalyzedModel): AnalyzedModel {
  if (!first.inputAssumed || !hasShapeError(first) || spec.runSample) return first;
  const guess = assumeInput(spec);
  if (guess.sequence || guess.dtype !== 'float' || guess.shape.length !== 3 || !guess.what.startsWith('an image')) return first;
  const channelsFirst = spec.layout !== 'channels_last';
  const channels = channelsFirst ? guess.shape[0]! : guess.shape[2]!;
  const side = guess.shape[1]!;
  for (const s of DATASET_IMAGE_SIDES) {
    if (s === side) continue;
    const shape = [channels, s, s];
    const source = `an image of ${s}×${s} (${channelsFirst ? 'channels_first' : 'channels_last'}), the size at which the layers' shapes agree (at ${side}×${side} they do not)`;
    const read = analyze({ ...spec, runSample: { shape, source } });
    if (!hasShapeError(read)) return read;
  }
  return first;
}
