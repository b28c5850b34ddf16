/**
 * What the analysed script states about the run that trains its model, beside the model code: the input sample its
 * dataset yields, its tokens per sample, precision, TF32 switch, batch and the process counts it accepts. Each is
 * read where the interpreter meets it (the run*.ts files) and carried onto the models the file trains (models.ts).
 */
import type { ProcessCountRule, RunPrecision } from '../../core/ir';
import type { BatchValue } from './runBatch';

export class RunFacts {
  /** The image sample the run's torchvision dataset yields, [C, H, W] (datasetSamples.ts). */
  sample: { shape: number[]; source: string } | undefined;
  /** The tokens per sample the run's command line states (runSequence.ts). */
  sequence: { tokens: number; source: string } | undefined;
  /** The precision the training code builds its trainer with (runPrecision.ts), and the default of one that states none. */
  precision: RunPrecision | undefined;
  precisionDefault: RunPrecision | undefined;
  /** Whether the run lets fp32 matmuls use TF32 tensor cores, and where it says so (runPrecision.ts). */
  tf32: { on: boolean; source: string } | undefined;
  /** Batch names the run's command line or TrainingArguments state, and values a split over the processes divided (runBatch.ts). */
  readonly batchOptions = new Map<string, BatchValue>();
  readonly batchSplit = new Map<string, BatchValue>();
  /** The per-process batch of the DataLoader a Lightning `trainer.fit` trains on (runLoaderBatch.ts). */
  fitLoader: BatchValue | undefined;
  /** A global batch the script states as a budget it divides into accumulation steps (runTokenBudget.ts). */
  budget: { samples: number; source: string; sequence?: { tokens: number; source: string } } | undefined;
  /** The divisibility the script's asserts demand of its process count (runProcessCounts.ts). */
  readonly processCounts: ProcessCountRule[] = [];
}

/** How a run fact names the file that states it: its base name, or "the script" for an unnamed buffer. */
export const fileLabel = (file: string | undefined): string => (file ?? 'the script').replace(/^.*[\\/]/, '');
