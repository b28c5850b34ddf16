/**
 * The sample a training script's torchvision dataset yields, for a model whose input the code does not state: the
 * MNIST example's Net was read at an assumed 1×224×224 image, its fc1 (9216 inputs, 28×28 after two convs and a
 * pool) then mismatched, and most of the model went unpriced. The sizes are torchvision's dataset documentation
 * (MNIST and its kin 28×28 grey, CIFAR-10/100 and SVHN 32×32 RGB, STL-10 96×96 RGB); a transform that resizes or
 * crops (Resize, CenterCrop, RandomCrop, RandomResizedCrop) or greys (Grayscale) changes the sample as it does in
 * torchvision. A transform WAP does not know how to size leaves the sample unsaid, so the input stays assumed.
 */
import { basename } from 'node:path';
import { rangeOf } from './ast';
import type { ModelSpec } from '../../core/ir';
import type { Interp } from './interpreter';
import { iterItems, type CallSite, type ClassV, type Value } from './values';

/** [channels, height, width] of one sample, before any transform. */
const SAMPLES: Readonly<Record<string, readonly [number, number, number]>> = {
  MNIST: [1, 28, 28], FashionMNIST: [1, 28, 28], KMNIST: [1, 28, 28], EMNIST: [1, 28, 28], QMNIST: [1, 28, 28],
  CIFAR10: [3, 32, 32], CIFAR100: [3, 32, 32], SVHN: [3, 32, 32], STL10: [3, 96, 96],
};

/** Transforms that leave a tensor sample's shape as it is. */
const SHAPE_KEEPING = new Set([
  'ToTensor', 'PILToTensor', 'ConvertImageDtype', 'Normalize', 'RandomHorizontalFlip', 'RandomVerticalFlip', 'ColorJitter',
  'RandomErasing', 'AutoAugment', 'RandAugment', 'TrivialAugmentWide', 'AugMix', 'RandomRotation', 'RandomAffine', 'RandomPerspective',
  'GaussianBlur', 'RandomGrayscale', 'RandomInvert', 'RandomPosterize', 'RandomSolarize', 'RandomAdjustSharpness', 'RandomAutocontrast', 'RandomEqualize',
]);

const RESIZING = new Set(['Resize', 'CenterCrop', 'RandomCrop', 'RandomResizedCrop']);

const fromTorchvision = (cls: ClassV, folder: string): boolean => new RegExp(`torchvision[\\\\/]${folder}[\\\\/]`).test(rangeOf(cls.node).file ?? '');

/** A `size` as torchvision stores it: an int (a square, or the shorter side for Resize) or (h, w). */
function sizeOf(v: Value | undefined): [number, number] | undefined {
  if (v?.k === 'num' && !v.float) return [v.v, v.v];
  const items = v ? iterItems(v) : undefined;
  if (items?.length === 1 && items[0]!.k === 'num') return [items[0]!.v as number, items[0]!.v as number];
  if (items?.length === 2 && items.every((i) => i.k === 'num')) return [items[0]!.v as number, items[1]!.v as number];
  return undefined;
}

/** The sample after one transform, or undefined where WAP cannot size it. */
function transformed(sample: [number, number, number], t: Value): [number, number, number] | undefined {
  if (t.k !== 'inst' || !fromTorchvision(t.cls, 'transforms')) return undefined;
  const name = t.cls.name;
  if (name === 'Compose') {
    const steps = iterItems(t.attrs.get('transforms') ?? { k: 'none' });
    let out: [number, number, number] | undefined = steps && sample;
    for (const step of steps ?? []) out = out && transformed(out, step);
    return out;
  }
  if (SHAPE_KEEPING.has(name)) return sample;
  if (name === 'Grayscale') {
    const channels = t.attrs.get('num_output_channels');
    return channels?.k === 'num' ? [channels.v, sample[1], sample[2]] : undefined;
  }
  if (!RESIZING.has(name)) return undefined;
  const size = sizeOf(t.attrs.get('size'));
  // Resize to an int keeps the aspect ratio: exact for the square samples above.
  return size && (name !== 'Resize' || sample[1] === sample[2]) ? [sample[0], size[0], size[1]] : undefined;
}

/** A torchvision dataset the script builds: its sample is the run's input, where the first one WAP can size says. */
export function noteDatasetSample(interp: Interp, cls: ClassV, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  const base = SAMPLES[cls.name];
  if (!base || interp.run.sample || !fromTorchvision(cls, 'datasets')) return;
  // The transform is a keyword in torchvision's examples; a positional one sits at a place that differs by dataset.
  const transform = kwargs.get('transform') ?? (args.length > 2 ? undefined : { k: 'none' });
  const sample = !transform ? undefined : transform.k === 'none' ? ([...base] as [number, number, number]) : transformed([...base], transform);
  if (!sample) return;
  const where = site.range.file ? basename(site.range.file) : (interp.file ? basename(interp.file) : 'the script');
  interp.run.sample = { shape: sample, source: `a sample of torchvision's ${cls.name}${transform?.k === 'none' ? '' : ' after its transform'} (${where}:${site.range.line})` };
}

/** The spec with the run's image sample, when a dataset the script builds says one. */
export function withRunSample(interp: Interp, spec: ModelSpec): ModelSpec {
  return interp.run.sample && !spec.runSample ? { ...spec, runSample: interp.run.sample } : spec;
}
