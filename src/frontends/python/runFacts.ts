/**
 * What the analysed script states about the run that trains its model, beside the model code: the input sample its
 * dataset yields, its tokens per sample, precision, TF32 switch, batch and the process counts it accepts. Each is
 * read where the interpreter meets it (the run*.ts files) and carried onto the models the file trains (models.ts).
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import type { ProcessCountRule, RunBatch, RunPrecision } from '../../core/runFacts';
import type { Interp } from './interpreter';
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
  /** cuDNN's TF32 switch for convolutions, on by default (`torch.backends.cudnn.allow_tf32`), where the run sets it. */
  convolutionTf32: { on: boolean; source: string } | undefined;
  /** Batch names the run's command line or TrainingArguments state, and values a split over the processes divided (runBatch.ts). */
  readonly batchOptions = new Map<string, BatchValue>();
  readonly batchSplit = new Map<string, BatchValue>();
  /** The per-process batch of the DataLoader a Lightning `trainer.fit` trains on (runLoaderBatch.ts). */
  fitLoader: BatchValue | undefined;
  /** The DataLoaders the run draws batches from, and how: a loop that steps backward over it, or `next()` (runLoaderBatch.ts). */
  readonly drawnLoaders: Array<{ batch: BatchValue; training: boolean }> = [];
  /** A global batch the script states as a budget it divides into accumulation steps (runTokenBudget.ts). */
  budget: { samples: number; source: string; sequence?: { tokens: number; source: string } } | undefined;
  /** The batch the training engine's own config states (deepspeed.initialize(config={...}); runDeepSpeedConfig.ts). */
  engineBatch: RunBatch | undefined;
  /** The nodes the run spans, where the script computes its world size from them (runBatchSplit.ts). */
  nodes: { value: number; said: string } | undefined;
  /** The divisibility the script's asserts demand of its process count (runProcessCounts.ts). */
  readonly processCounts: ProcessCountRule[] = [];
}

/** How a run fact names the file that states it: its base name, or "the script" for an unnamed buffer. */
export const fileLabel = (file: string | undefined): string => (file ?? 'the script').replace(/^.*[\\/]/, '');

/**
 * A note on how the run was read that every plan of its models repeats (Diagnostic.carriesToPlan; planner.ts): the
 * plan is read away from the code, and a batch or model read from a guess must say so there too. Once per message.
 */
export function noteForPlans(interp: Interp, at: SourceRange, message: string, code: string, severity: Diagnostic['severity']): void {
  if (interp.runNotes.some((d) => d.message === message)) return;
  interp.runNotes.push({ severity, message, code, carriesToPlan: true, line: at.line, column: at.column, endLine: at.endLine, endColumn: at.endColumn, ...(at.file ? { file: at.file } : {}) });
}
