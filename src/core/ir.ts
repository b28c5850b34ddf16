/**
 * WAP's intermediate representation: a model as a DAG of layers.
 *
 * Frontends produce a `ModelSpec` (layers as written, no shapes). The core's
 * `analyzeModel` turns it into an `AnalyzedModel` (shapes and workload per layer).
 * Everything downstream — planner, profiler, server, webview, configs — reads
 * `AnalyzedModel` and never a frontend's syntax tree.
 *
 * Conventions:
 * - Shapes never include the batch dimension.
 * - Lines and columns are 1-based, as people and the CLI print them; the LSP
 *   server converts to 0-based at its edge.
 * - FLOPs count one multiply-add as 2 FLOPs, per sample.
 * - Axes written in attrs (concat `axis`, flatten `startDim`, …) are the
 *   framework's own, i.e. they *include* the batch dimension (torch.cat(x, 1)
 *   → axis 1), and may be negative.
 */

import type { Completeness } from './completeness';

import type { ProcessCountRule, RunBatch, RunPrecision } from './runFacts';

export type Shape = readonly number[];

export type Framework = 'pytorch' | 'keras' | 'tfjs' | 'keras-json';

/** Where the channel axis of image-like tensors sits. PyTorch is channels_first; Keras and TF.js default to channels_last. */
export type Layout = 'channels_first' | 'channels_last';

export type Severity = 'error' | 'warning' | 'info';

export interface SourceRange {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** The file this range lies in, when it is not the analysed file (a class or layer defined in an imported module). */
  file?: string;
}

export interface Diagnostic {
  severity: Severity;
  message: string;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  /** Stable machine-readable code, e.g. 'unknown-layer', 'parse-error', 'assumed-input'. */
  code?: string;
  /** Set by a frontend when what it reports leaves the model incomplete (see core/completeness.ts for the codes that always do). */
  incomplete?: boolean;
  /** The file the line/column refer to, when it is not the analysed file (code in an imported module). */
  file?: string;
  /** A reading that changes what a plan of this model means (frozen parameters): every plan repeats it. */
  carriesToPlan?: boolean;
}

/** Attribute values a frontend can hand the catalogue after partial evaluation. */
export type AttrValue = number | string | boolean | null | readonly AttrValue[] | { readonly [key: string]: AttrValue };

export type Attrs = Record<string, AttrValue>;

/**
 * Canonical operation kinds. Frontends map framework types (nn.Conv2d,
 * layers.Conv2D, tf.layers.conv2d) onto these, with the canonical attrs the
 * catalogue documents for each kind (see `catalogue/`).
 */
export type OpKind =
  | 'input'
  | 'conv'
  | 'separable_conv'
  | 'linear'
  | 'embedding'
  | 'batchnorm'
  | 'layernorm'
  | 'groupnorm'
  | 'pool'
  | 'flatten'
  | 'reshape'
  | 'permute'
  | 'zeropad'
  | 'upsample'
  | 'dropout'
  | 'activation'
  | 'add'
  | 'mul'
  | 'concat'
  | 'split'
  | 'matmul'
  /** A reduction over some non-batch axes (`x.mean(dim=1)` over tokens, `x.sum(-1)`, `x.amax(1)`). */
  | 'reduce'
  | 'mha'
  | 'sdpa'
  | 'rnn'
  | 'identity'
  /** Rows of a tensor picked by a constant index (Swin V2's position bias table indexed by a precomputed index). */
  | 'gather'
  /** A learned tensor used directly in forward (class token, position embedding, layer scale). */
  | 'parameter'
  | 'opaque';

/**
 * A float element type the code pins activations to by an explicit cast (`scores.float()`, `x.to(torch.bfloat16)`;
 * frontends/python/casts.ts). Activations nobody cast follow the plan's precision.
 */
export type PinnedDtype = 'fp32' | 'fp16' | 'bf16';
export const PINNED_DTYPE_BYTES: Readonly<Record<PinnedDtype, number>> = { fp32: 4, fp16: 2, bf16: 2 };

/** A layer as the frontend found it: before shape inference. */
export interface LayerSpec {
  /** Unique within the model. Usually equal to `name`; a module called twice in forward gets `name#2`. */
  id: string;
  /** The framework's own name: `features.0`, `layer1.0.conv1`, `conv2d_3`, `dense_1`. */
  name: string;
  /** The type as written: `Conv2d`, `Dense`, `conv2d`, `torch.cat`, `F.relu`. */
  type: string;
  op: OpKind;
  attrs: Attrs;
  /** Producer ids (layer ids or model input ids), in argument order. */
  inputs: string[];
  /** Where the layer is defined (the constructor call). */
  range: SourceRange;
  /** Where it is applied, when that differs (e.g. `self.fc(x)` inside `forward`). */
  callRange?: SourceRange;
  /** Layers sharing a weightKey share weights: the params count once (tied embeddings, a module reused twice). */
  weightKey?: string;
  /**
   * The dtype of the activations this layer computes on and writes, when a cast upstream pinned it: its bytes and
   * saved tensors are at that size whatever the plan's precision. Absent: the plan's precision.
   */
  activationDtype?: PinnedDtype;
  /**
   * For a cast to another tensor's dtype (`.type_as(y)`, `.to(x.dtype)`, `.to(input_dtype)`): that tensor's producer
   * id. Without autocast it holds the plan's dtype; under autocast it may be fp32 (planner: core/autocast.ts).
   */
  dtypeLike?: string;
  /**
   * Its parameters do not train (`requires_grad_(False)` on its module or a module around it): they keep their
   * weights, but have no gradient, optimizer state or weight-gradient compute (core/frozenParameters.ts).
   */
  frozen?: boolean;
  /**
   * Its weight is stored quantized and dequantized before each matmul (bitsandbytes through transformers:
   * QLoRA's 4-bit NF4, LLM.int8()); such a weight never trains, so the layer is also `frozen`
   * (core/quantizedWeights.ts).
   */
  quantizedWeights?: QuantizedWeights;
}

/** How a layer's weight is stored quantized: bitsandbytes' formats. */
export interface QuantizedWeights {
  /** 'nf4' / 'fp4': 4-bit blocks of 64 with an absmax each; 'int8': LLM.int8()'s row-wise int8. */
  format: 'nf4' | 'fp4' | 'int8';
  /** QLoRA's double quantization of the 4-bit blocks' absmax constants. */
  doubleQuant?: boolean;
}

export interface ModelInput {
  id: string;
  /** Without batch; undefined when the code does not state it. */
  shape?: Shape;
  /** 'int' inputs are token ids (Embedding); 'float' is the default. */
  dtype?: 'float' | 'int';
  /**
   * Set when the shape is a default the frontend chose rather than one the code
   * states, in words for the diagnostic ("the config's max_position_embeddings").
   */
  assumed?: string;
  /**
   * For an assumed token-id input: the graph holds for any sequence length (its
   * views use -1), so `--seq-len` may replace the assumed length. A graph read
   * for one concrete size (python/specialise.ts) does not set it.
   */
  lengthFree?: boolean;
  /** The most tokens the model has positions for (its position embeddings), and in words where that comes from. */
  maxLength?: { tokens: number; what: string };
}

/** A sequence model's tokens per sample, and where that number came from (for the plan). */
export interface SequenceInfo {
  /** The input that carries the tokens. */
  input: string;
  length: number;
  /** '--input', '--seq-len', 'stated in the code', or 'assumed: <why>'. */
  source: string;
  assumed: boolean;
}

/** A model as a frontend read it. */
export interface ModelSpec {
  name: string;
  framework: Framework;
  /** Where the model is defined (the factory, class or instance). */
  range: SourceRange;
  layout: Layout;
  inputs: ModelInput[];
  /** Topological order (producers before consumers). */
  layers: LayerSpec[];
  outputs: string[];
  /** Diagnostics that belong to this model (partial graph, unknown layer…). */
  diagnostics: Diagnostic[];
  /**
   * The tokens per sample the training run states on its command line (`--block_size 1024` read by the script's
   * argparse): a token sequence whose length the code leaves open is read at it, below `--seq-len`.
   */
  runSequence?: { tokens: number; source: string };
  /**
   * The image sample ([C, H, W]) the training run's dataset yields (a torchvision MNIST or CIFAR-10 the script
   * builds): an image input the code leaves open is assumed at it rather than at 224×224.
   */
  runSample?: { shape: number[]; source: string };
  /**
   * The precision the code that trains it builds its trainer with, where the run computes it (a Lightning
   * `Trainer(precision=cfg.trainer.precision)` of a Hydra config): the plan's precision where no flag, setting or
   * training config beside the model states one.
   */
  runPrecision?: RunPrecision;
  /** The batch the code that trains it states, as the run computes it (frontends/python/runBatch.ts). */
  runBatch?: RunBatch;
  /** The process counts the training script accepts, from its asserts (frontends/python/runProcessCounts.ts). */
  processCountRules?: ProcessCountRule[];
}

/** Everything a frontend returns for one file. */
export interface FrontendResult {
  framework: Framework;
  models: ModelSpec[];
  /** File-level diagnostics (parse errors, "no model found" is NOT one: an empty models list says that). */
  diagnostics: Diagnostic[];
}

/**
 * Per-layer training workload, per sample unless stated; for a layer marked `oncePerForward` (core/oncePerForward.ts),
 * per forward of the whole micro-batch.
 */
export interface LayerWorkload {
  /** Trainable parameters (0 for the second and later users of tied weights). */
  params: number;
  /** Non-trainable state, e.g. BatchNorm running mean/var. */
  nonTrainable: number;
  /** Parameters the code freezes (LayerSpec.frozen): weights without gradient or optimizer state. Absent: none. */
  frozenParams?: number;
  /**
   * Of frozenParams, those stored quantized (LayerSpec.quantizedWeights) and the bytes they take with their
   * quantization constants, whatever the training precision. Absent: none.
   */
  quantized?: { params: number; bytes: number };
  forwardFlops: number;
  /** Input-gradient plus weight-gradient FLOPs. */
  backwardFlops: number;
  /**
   * What the backward computes when the code froze parameters (core/frozenParameters.ts): 'none' where autograd
   * records nothing (nothing upstream trains), 'input-gradient' for a frozen layer that passes the gradient on.
   * Absent: both gradients, as trained.
   */
  backward?: 'none' | 'input-gradient';
  /**
   * With `backward: 'input-gradient'`, the share of the trained backward's FLOPs it still runs (half for a Linear, all
   * but the projections' weight gradients for a MultiheadAttention): what scales a measured trial, timed trained.
   */
  inputGradientShare?: number;
  /** Output activation bytes per sample. */
  activationBytes: number;
  /**
   * Activation bytes per sample that must be kept for the backward pass (inputs of weighted ops, masks…),
   * without tensors an earlier layer already saves (autograd keeps one copy; see analyze.ts).
   */
  savedActivationBytes: number;
  /** Of savedActivationBytes, the int64 indices and bool masks: their size does not follow the training precision. Absent: none. */
  savedFixedBytes?: number;
  /** Bytes this op saves that are counted at an earlier layer instead (a shared tensor); absent when none. */
  sharedSavedBytes?: number;
  /** Gradient bytes to all-reduce in data parallelism (params × dtype bytes; 0 for tied duplicates). */
  weightGradBytes: number;
}

export interface AnalyzedLayer extends LayerSpec {
  inputShapes: Shape[];
  /** Undefined when inference failed upstream (unknown layer, bad attrs): a diagnostic says why. */
  outputShape: Shape | undefined;
  workload: LayerWorkload;
  /** For tied weights: the id of the layer that owns (and counts) the parameters. */
  weightOwner?: string;
}

export interface ModelTotals {
  params: number;
  nonTrainable: number;
  /** Parameters the code freezes; absent when none. */
  frozenParams?: number;
  /** Of those, the ones stored quantized and their bytes; absent when none. */
  quantized?: { params: number; bytes: number };
  forwardFlops: number;
  backwardFlops: number;
  activationBytes: number;
  /**
   * The work of layers marked `oncePerForward`, done once per forward whatever the batch (core/oncePerForward.ts):
   * kept out of the per-sample sums above. Absent when no layer is so marked.
   */
  oncePerForward?: { forwardFlops: number; backwardFlops: number; activationBytes: number };
}

export interface AnalyzedModel {
  name: string;
  framework: Framework;
  range: SourceRange;
  layout: Layout;
  /** The first input's shape as used for inference. */
  input: Shape;
  inputs: Array<ModelInput & { shape: Shape }>;
  /** True when the input shape is the framework default rather than stated in code or given by the user. */
  inputAssumed: boolean;
  /** For sequence models: the tokens per sample and where they came from. */
  sequence?: SequenceInfo;
  layers: AnalyzedLayer[];
  outputs: string[];
  totals: ModelTotals;
  /** Bytes per element used for activations and gradients (4 = fp32). */
  dtypeBytes: number;
  diagnostics: Diagnostic[];
  /** Whether parts of the model are known to be missing or guessed (see core/completeness.ts). */
  completeness?: Completeness;
  /** ModelSpec.runPrecision, carried to the planner. */
  runPrecision?: RunPrecision;
  /** ModelSpec.runBatch, carried to the planner. */
  runBatch?: RunBatch;
  /** ModelSpec.processCountRules, carried to the planner. */
  processCountRules?: ProcessCountRule[];
}

export interface AnalysisResult {
  file: string;
  framework: Framework | undefined;
  models: AnalyzedModel[];
  diagnostics: Diagnostic[];
}

export interface AnalyzeOptions {
  /** Overrides the input shape (without batch): `--input 3,224,224`. */
  inputShape?: Shape;
  /** Tokens per sample for a sequence input whose length the code does not state: `--seq-len 512` (`--input` wins). */
  sequenceLength?: number;
  /** Who states `sequenceLength` when the user did not: a training config ("recipe.yaml's cutoff_len 2048"). */
  sequenceSource?: string;
  /** Bytes per element, default 4 (fp32). */
  dtypeBytes?: number;
  /**
   * The command-line arguments the script is run with (after the script's name), for the argparse it reads them
   * with: from the launch script that runs it, or given by the user. Launch scripts that differ in some options give
   * the options they share, and `differing` names the others (read at the script's defaults). Absent, or launch
   * scripts that share none (`disagree` names them): read as run with none.
   */
  scriptArguments?: { words: string[]; source: string; differing?: string[] } | { disagree: string[] };
}

export function rangeAt(line: number, column: number, endLine = line, endColumn = column): SourceRange {
  return { line, column, endLine, endColumn };
}

/** A diagnostic over `range` (the file's first position when none is known). */
export function diagnosticAt(severity: Diagnostic['severity'], code: string, message: string, range: SourceRange | undefined): Diagnostic {
  const r: SourceRange = range ?? { line: 1, column: 1, endLine: 1, endColumn: 1 };
  // A layer built in another file (torchvision's resnet.py) is said there, not at the same line of the analysed file.
  return { severity, code, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, ...(r.file ? { file: r.file } : {}) };
}

export function emptyWorkload(): LayerWorkload {
  return {
    params: 0,
    nonTrainable: 0,
    forwardFlops: 0,
    backwardFlops: 0,
    activationBytes: 0,
    savedActivationBytes: 0,
    weightGradBytes: 0,
  };
}

export function product(shape: Shape): number {
  // An index loop: shapes come as small-integer and as double arrays, and over both kinds a for-of
  // here kept allocating array iterators (it runs for every layer and tensor of every analysis).
  let n = 1;
  for (let i = 0; i < shape.length; i++) n *= shape[i];
  return n;
}
