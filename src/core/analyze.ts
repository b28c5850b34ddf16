/**
 * ModelSpec → AnalyzedModel: resolves the input shape, walks the layers in
 * topological order through the catalogue, and accounts tied weights.
 * Never throws: every problem becomes a diagnostic on the model.
 */
import { inferLayer, isInferError } from './catalogue/index';
import type { AnalyzeOptions, AnalyzedLayer, AnalyzedModel, Diagnostic, LayerSpec, LayerWorkload, ModelSpec, ModelTotals, Shape } from './ir';
import { diagnosticAt as diag, emptyWorkload, PINNED_DTYPE_BYTES, product } from './ir';
import { showShape } from './catalogue/attrs';
import type { FrozenBackward } from './catalogue/types';
import { resolveInputs } from './inputs';
import { assessCompleteness } from './completeness';
import { withProps } from './objects';
import { accountFrozenParameters } from './frozenParameters';
import { accountQuantizedWeights } from './quantizedWeights';
import { paramsWithoutInput } from './paramsWithoutInput';
import { withFittingImageSize } from './fittingImageSize';
import { runsOncePerForward } from './oncePerForward';

const DEFAULT_DTYPE_BYTES = 4;

interface LayerOutcome {
  inputShapes: Shape[];
  outputShape: Shape | undefined;
  workload: LayerWorkload;
  /** Graph tensors among the saved bytes (producer ids, or the layer's own id for its output) with their shapes. */
  savedTensors?: Array<{ id: string; shape: Shape }>;
  /** What the backward runs and keeps with the weights frozen, where the op says (catalogue FrozenBackward). */
  frozen?: FrozenBackward;
}

/** A layer whose shape could not be worked out: says why, and leaves its shape and workload unknown. */
function failed(layer: LayerSpec, diagnostics: Diagnostic[], code: string, message: string): LayerOutcome {
  diagnostics.push(diag('warning', code, `${layer.name} (${layer.type}): ${message}`, layer.range));
  return { inputShapes: [], outputShape: undefined, workload: emptyWorkload() };
}

function analyzeLayer(
  layer: LayerSpec,
  known: Map<string, Shape | undefined>,
  laterIds: Set<string>,
  firstInput: { id: string; shape: Shape },
  spec: ModelSpec,
  modelDtypeBytes: number,
  diagnostics: Diagnostic[],
): LayerOutcome {
  // A layer on activations a cast pinned computes and saves at that dtype, not the model's.
  const dtypeBytes = layer.activationDtype ? PINNED_DTYPE_BYTES[layer.activationDtype] : modelDtypeBytes;
  // An input layer takes the model input of the same id; a layer with no producers reads the model's first input.
  const producerIds = layer.op === 'input' ? [known.has(layer.id) ? layer.id : firstInput.id] : layer.inputs?.length ? layer.inputs : [firstInput.id];
  const inputShapes: Shape[] = [];
  for (const id of producerIds) {
    if (!known.has(id)) {
      const why = laterIds.has(id) ? `its input '${id}' is defined after it (layers must be in topological order)` : `its input '${id}' is not a layer or model input`;
      return failed(layer, diagnostics, 'unknown-layer', why);
    }
    const shape = known.get(id);
    // Upstream already reported why; stay quiet so one unknown layer yields one diagnostic. Its weights still count
    // where its own sizes give them (paramsWithoutInput.ts).
    if (shape === undefined) return { inputShapes: [], outputShape: undefined, workload: weightsOnly(layer, spec, modelDtypeBytes) };
    inputShapes.push(shape);
  }
  if (layer.op === 'opaque') {
    const reason = typeof layer.attrs?.reason === 'string' ? `: ${layer.attrs.reason}` : '';
    return failed(layer, diagnostics, 'unknown-layer', `WAP does not know this layer${reason}; its output shape and workload are unknown, and so are those of the layers after it`);
  }
  const result = inferLayer(layer.op, inputShapes, layer.attrs ?? {}, { layout: spec.layout, dtypeBytes });
  if (isInferError(result)) {
    const code = result.error.startsWith('unknown op kind') ? 'unknown-layer' : 'shape-error';
    return { ...failed(layer, diagnostics, code, `${result.error} (input ${inputShapes.map(showShape).join(', ')})`), inputShapes };
  }
  // Parameters the op itself does not own (nn.Parameter tensors such as a class token) are carried as attrs.extraParams.
  const extra = typeof layer.attrs?.extraParams === 'number' && Number.isInteger(layer.attrs.extraParams) && layer.attrs.extraParams > 0 ? layer.attrs.extraParams : 0;
  const params = result.params + extra;
  const savedTensors: Array<{ id: string; shape: Shape }> = [];
  for (const i of result.saves?.inputs ?? []) if (i < producerIds.length) savedTensors.push({ id: producerIds[i], shape: inputShapes[i] });
  if (result.saves?.output) savedTensors.push({ id: layer.id, shape: result.outputShape });
  return {
    savedTensors,
    ...(result.frozen ? { frozen: result.frozen } : {}),
    inputShapes,
    outputShape: result.outputShape,
    workload: {
      params,
      nonTrainable: result.nonTrainable,
      forwardFlops: result.forwardFlops,
      backwardFlops: result.backwardFlops,
      activationBytes: product(result.outputShape) * dtypeBytes,
      savedActivationBytes: result.savedActivationBytes ?? 0,
      // Pinned bytes do not follow the plan's precision: all of them are fixed-size, as masks are.
      ...(layer.activationDtype && result.savedActivationBytes ? { savedFixedBytes: result.savedActivationBytes } : result.savedFixedBytes ? { savedFixedBytes: result.savedFixedBytes } : {}),
      weightGradBytes: params * modelDtypeBytes,
    },
  };
}

/** The workload of a layer read without its input: the weights its own sizes give, and nothing it computes. */
function weightsOnly(layer: LayerSpec, spec: ModelSpec, modelDtypeBytes: number): LayerWorkload {
  const weights = paramsWithoutInput(layer, spec.layout, modelDtypeBytes);
  if (!weights) return emptyWorkload();
  return { ...emptyWorkload(), params: weights.params, nonTrainable: weights.nonTrainable, weightGradBytes: weights.params * modelDtypeBytes };
}

/** `name#2` (the second call of a module) shares weights with `name`. */
function weightKeyOf(layer: LayerSpec): string {
  return layer.weightKey ?? layer.id.replace(/#\d+$/, '');
}

/**
 * Counts shared weights once: the first successfully analysed layer of a key owns
 * them; later users keep only what exceeds the owner (e.g. an untied bias on a
 * decoder tied to an embedding), usually 0.
 */
function accountTiedWeights(layers: AnalyzedLayer[], dtypeBytes: number): void {
  const owners = new Map<string, AnalyzedLayer>();
  for (const layer of layers) {
    // A layer read without its input still holds the weights its sizes give: a tied one is counted once all the same.
    const w = layer.workload;
    if (w.params === 0 && w.nonTrainable === 0) continue;
    const key = weightKeyOf(layer);
    const owner = owners.get(key);
    if (!owner) {
      owners.set(key, layer);
      continue;
    }
    w.params = Math.max(0, w.params - owner.workload.params);
    w.nonTrainable = Math.max(0, w.nonTrainable - owner.workload.nonTrainable);
    w.weightGradBytes = w.params * dtypeBytes;
    layer.weightOwner = owner.id;
  }
}

/** Ops whose output is a view of their input in PyTorch (same storage): a saved view is the saved input. */
const VIEW_OPS = new Set(['input', 'identity', 'flatten', 'reshape', 'permute']);

/**
 * Counts each saved graph tensor once. Autograd keeps one reference per saved
 * tensor, not a copy per op that saves it (torch.autograd.graph
 * saved_tensors_hooks sees the same storage): in conv → BN → ReLU(inplace) →
 * conv, BN saves its input (the conv's output), ReLU saves its result
 * (derivatives.yaml: `threshold_backward(grad, result, 0)`), and the next
 * conv (and a max pool, or a downsample conv) saves that same result as its
 * input. Summing the ops' saved bytes counted that tensor twice or three
 * times: torchvision resnet50 at fp32 came to 128.8 MB per sample where torch
 * keeps 85.9 MB. The first layer (in graph order) that saves a tensor keeps
 * its bytes; later ones drop them from savedActivationBytes (and say so in
 * sharedSavedBytes). Views (flatten, reshape, permute) are the tensor they
 * view. test/planner/activationMemory.test.ts checks the sums against torch.
 * Known gap: a pipeline stage whose first layer saves the activation it
 * receives (counted at the previous stage's last layer) leaves out that one
 * tensor per micro-batch in flight.
 */
function accountSharedSavedTensors(layers: AnalyzedLayer[], savedBy: Array<Array<{ id: string; shape: Shape }>>, dtypeBytes: number): void {
  const viewOf = new Map<string, string>();
  // A tensor a cast pinned is saved at its own size by whichever layer keeps it.
  const pinnedBytes = new Map<string, number>();
  for (const l of layers) if (l.activationDtype) pinnedBytes.set(l.id, PINNED_DTYPE_BYTES[l.activationDtype]);
  const root = (id: string): string => {
    let r = id;
    for (let n = viewOf.get(r); n !== undefined && n !== r; n = viewOf.get(r)) r = n;
    return r;
  };
  layers.forEach((l) => {
    const source = l.inputs?.[0];
    if (VIEW_OPS.has(l.op) && source !== undefined && l.inputs.length === 1 && l.outputShape && product(l.outputShape) === product(l.inputShapes[0] ?? [])) viewOf.set(l.id, source);
  });
  const counted = new Set<string>();
  layers.forEach((l, i) => {
    let shared = 0;
    for (const t of savedBy[i]) {
      const key = root(t.id);
      if (counted.has(key)) shared += product(t.shape) * (pinnedBytes.get(t.id) ?? dtypeBytes);
      else counted.add(key);
    }
    if (shared > 0) {
      l.workload.savedActivationBytes = Math.max(0, l.workload.savedActivationBytes - shared);
      l.workload.sharedSavedBytes = shared;
    }
  });
}

function sumTotals(layers: AnalyzedLayer[]): ModelTotals {
  const t: ModelTotals = { params: 0, nonTrainable: 0, forwardFlops: 0, backwardFlops: 0, activationBytes: 0 };
  for (const layer of layers) {
    const w = layer.workload;
    t.params += w.params;
    t.nonTrainable += w.nonTrainable;
    if (w.frozenParams) t.frozenParams = (t.frozenParams ?? 0) + w.frozenParams;
    if (w.quantized) t.quantized = { params: (t.quantized?.params ?? 0) + w.quantized.params, bytes: (t.quantized?.bytes ?? 0) + w.quantized.bytes };
    // Work done once per forward is not per sample: its own sum, which a batch adds once (oncePerForward.ts).
    const sums = runsOncePerForward(layer) ? (t.oncePerForward ??= { forwardFlops: 0, backwardFlops: 0, activationBytes: 0 }) : t;
    sums.forwardFlops += w.forwardFlops;
    sums.backwardFlops += w.backwardFlops;
    sums.activationBytes += w.activationBytes;
  }
  return t;
}

export function analyzeModel(spec: ModelSpec, options: AnalyzeOptions = {}): AnalyzedModel {
  const first = analyzeAt(spec, options);
  return options.inputShape ? first : withFittingImageSize(spec, first, (sized) => analyzeAt(sized, options));
}

function analyzeAt(spec: ModelSpec, options: AnalyzeOptions): AnalyzedModel {
  const dtypeBytes = typeof options.dtypeBytes === 'number' && options.dtypeBytes > 0 && Number.isFinite(options.dtypeBytes) ? options.dtypeBytes : DEFAULT_DTYPE_BYTES;
  const diagnostics: Diagnostic[] = [...(spec.diagnostics ?? [])];
  const { inputs, assumed, sequence } = resolveInputs(spec, options, diagnostics);
  const known = new Map<string, Shape | undefined>(inputs.map((i) => [i.id, i.shape]));
  const specLayers = spec.layers ?? [];
  const laterIds = new Set(specLayers.map((l) => l.id));
  const layers: AnalyzedLayer[] = [];
  const savedBy: Array<Array<{ id: string; shape: Shape }>> = [];
  const frozenBackwards: Array<FrozenBackward | undefined> = [];
  for (const layer of specLayers) {
    let outcome: LayerOutcome;
    try {
      outcome = analyzeLayer(layer, known, laterIds, inputs[0], spec, dtypeBytes, diagnostics);
    } catch (e) {
      // A malformed LayerSpec (not a catalogue error: those come back as values).
      diagnostics.push(diag('warning', 'shape-error', `${layer?.name ?? layer?.id}: internal error: ${e instanceof Error ? e.message : String(e)}`, layer?.range));
      outcome = { inputShapes: [], outputShape: undefined, workload: emptyWorkload() };
    }
    known.set(layer.id, outcome.outputShape);
    layers.push(withProps(layer, { inputShapes: outcome.inputShapes, outputShape: outcome.outputShape, workload: outcome.workload }));
    savedBy.push(outcome.savedTensors ?? []);
    frozenBackwards.push(outcome.frozen);
  }
  accountTiedWeights(layers, dtypeBytes);
  accountFrozenParameters(layers, savedBy, frozenBackwards);
  accountQuantizedWeights(layers);
  accountSharedSavedTensors(layers, savedBy, dtypeBytes);
  return {
    name: spec.name,
    framework: spec.framework,
    range: spec.range,
    layout: spec.layout,
    input: inputs[0].shape,
    inputs,
    inputAssumed: assumed,
    ...(sequence ? { sequence } : {}),
    layers,
    outputs: spec.outputs ?? [],
    totals: sumTotals(layers),
    dtypeBytes,
    diagnostics,
    completeness: assessCompleteness(layers, diagnostics),
    ...(spec.runPrecision ? { runPrecision: spec.runPrecision } : {}),
    ...(spec.runBatch ? { runBatch: spec.runBatch } : {}),
    ...(spec.processCountRules ? { processCountRules: spec.processCountRules } : {}),
  };
}
