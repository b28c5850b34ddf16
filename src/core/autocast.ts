/**
 * What `torch.autocast` does to a model's activations, so a plan for autocast training (accelerate's
 * `mixed_precision`, Lightning's "bf16-mixed", the HF Trainer's `bf16=True`, DeepLearningExamples' native AMP)
 * prices the dtypes PyTorch actually runs rather than 16 bits everywhere.
 *
 * Under autocast the parameters stay fp32 and each op picks its own dtype (PyTorch docs, "Automatic Mixed
 * Precision package", CUDA Op-Specific Behavior; the policies in aten/src/ATen/autocast_mode.cpp):
 * - GEMM-like ops (linear, conv, matmul/bmm, attention) cast their inputs to 16 bits and write 16 bits;
 * - a listed set runs in fp32 (layer_norm, group_norm, softmax, log_softmax, sum, cumsum, norm, exp, log, pow, rsqrt,
 *   reciprocal, softplus, the losses); softmax, log_softmax, sum and cumsum take a dtype argument and read 16 bits directly
 *   (`fp32_set_opt_dtype`), the others cast their 16-bit inputs first;
 * - everything else runs in the dtype its inputs have, with torch's type promotion when they differ (a residual
 *   add of an fp32 LayerNorm output and a 16-bit projection writes fp32);
 * - ops that own weights and are in no list (embedding) compute at the weights' dtype: fp32.
 * An input cast is a real `_to_copy` kernel, and its result is what a Linear saves for backward: each of BERT's
 * separate query/key/value projections casts (and keeps) its own copy of the fp32 LayerNorm output.
 *
 * `autocastModel` rewrites the graph with those dtypes as pins (LayerSpec.activationDtype) and the input casts as
 * cast nodes, then analyses it again: saved bytes, casts and pinned layers are then priced by the same code that
 * prices casts written in forward (planner/cost/pinnedDtype.ts).
 */
import { analyzeModel } from './analyze';
import type { AnalyzedModel, Attrs, LayerSpec, ModelSpec, OpKind, PinnedDtype } from './ir';
import { runsOncePerForward } from './oncePerForward';

export type LowPrecision = 'fp16' | 'bf16';

/** Ops autocast runs in 16 bits, casting fp32 inputs first ("CUDA Ops that can autocast to float16"). */
const LOWER: ReadonlySet<OpKind> = new Set(['conv', 'separable_conv', 'linear', 'matmul', 'sdpa', 'mha', 'rnn']);
/** Elementwise functions autocast runs in fp32 after casting their inputs ("CUDA Ops that can autocast to float32"). */
const FP32_FNS: ReadonlySet<string> = new Set(['exp', 'log', 'pow', 'rsqrt', 'reciprocal', 'softplus']);
/** fp32 ops that take a dtype argument: autocast passes dtype=float32, and one kernel reads 16 bits and writes fp32. */
const FP32_IN_KERNEL_FNS: ReadonlySet<string> = new Set(['softmax', 'log_softmax', 'cumsum']);
/** Ops that own weights and are in no autocast list: they compute at the fp32 parameters' dtype. */
const AT_WEIGHT_DTYPE: ReadonlySet<OpKind> = new Set(['embedding', 'parameter']);

/** Whether autocast casts this op's fp32 weights to 16 bits each forward: only the ops it runs in 16 bits (not BatchNorm's or LayerNorm's). */
export function autocastCastsWeights(op: OpKind): boolean {
  return LOWER.has(op);
}

type Policy = 'lower' | 'fp32-cast-inputs' | 'fp32-in-kernel' | 'weights' | 'promote' | 'cast';

function policyOf(layer: LayerSpec): Policy {
  const fn = typeof layer.attrs?.fn === 'string' ? layer.attrs.fn : undefined;
  if (LOWER.has(layer.op)) return 'lower';
  if (layer.op === 'layernorm' || layer.op === 'groupnorm') return 'fp32-cast-inputs';
  if (AT_WEIGHT_DTYPE.has(layer.op)) return 'weights';
  if (layer.op === 'activation' && fn === 'cast') return 'cast';
  if (layer.op === 'activation' && fn && FP32_FNS.has(fn)) return 'fp32-cast-inputs';
  if (layer.op === 'activation' && fn && FP32_IN_KERNEL_FNS.has(fn)) return 'fp32-in-kernel';
  if (layer.op === 'reduce' && fn === 'sum') return 'fp32-in-kernel';
  if (layer.op === 'reduce' && fn === 'norm') return 'fp32-cast-inputs';
  // batch_norm is in no list: cuDNN takes 16-bit inputs with fp32 parameters and writes the input's dtype.
  return 'promote';
}

/** torch's type promotion over float dtypes: fp32 wins, and fp16 with bf16 gives fp32. */
function widest(dtypes: readonly PinnedDtype[], fallback: PinnedDtype): PinnedDtype {
  const set = new Set(dtypes);
  if (set.size === 0) return fallback;
  if (set.size > 1 || set.has('fp32')) return 'fp32';
  return dtypes[0]!;
}

export interface AutocastGraph {
  layers: LayerSpec[];
  /** Cast nodes autocast adds in front of ops whose inputs have the other dtype. */
  insertedCasts: number;
  /** Layers that run in fp32 under autocast. */
  fp32Layers: number;
}

/**
 * The layers as autocast runs them at `low` precision: every layer's dtype as a pin (absent = `low`, the plan's),
 * explicit casts with both sides stated, and autocast's input casts as new cast nodes (id `<layer>:autocast<i>`).
 * `floatInputs` are the model inputs that carry floats (fp32 data); the rest (token ids) are not floats.
 */
export function autocastLayers(layers: readonly LayerSpec[], floatInputs: ReadonlySet<string>, low: LowPrecision): AutocastGraph {
  const dtypes = new Map<string, PinnedDtype>();
  for (const id of floatInputs) dtypes.set(id, 'fp32');
  const out: LayerSpec[] = [];
  let insertedCasts = 0;
  let fp32Layers = 0;
  const pin = (d: PinnedDtype): PinnedDtype | undefined => (d === low ? undefined : d);
  /**
   * The producer ids of `layer`, with a cast node in front of each float input whose dtype is not `want`. Autocast
   * casts per argument of the op it wraps, so one tensor passed twice is cast twice, except into
   * nn.MultiheadAttention: with query, key and value the same tensor it runs one packed in-projection
   * (F.multi_head_attention_forward's `_in_projection_packed`), one linear, one cast.
   */
  const castInputsTo = (layer: LayerSpec, want: PinnedDtype): string[] => {
    const castOf = new Map<string, string>();
    return layer.inputs.map((id, i) => {
      const have = dtypes.get(id);
      if (have === undefined || have === want) return id;
      const shared = layer.op === 'mha' ? castOf.get(id) : undefined;
      if (shared) return shared;
      const castId = `${layer.id}:autocast${i}`;
      castOf.set(id, castId);
      // An input of a layer run once per forward is the same for every sample: so is its cast (oncePerForward.ts).
      const once: Attrs = runsOncePerForward(layer) ? { oncePerForward: true } : {};
      out.push({ id: castId, name: `${layer.name} (autocast input cast)`, type: 'autocast', op: 'activation', attrs: { fn: 'cast', from: have, to: want, ...once }, inputs: [id], range: layer.range, ...(layer.callRange ? { callRange: layer.callRange } : {}), ...(pin(want) ? { activationDtype: want } : {}) });
      dtypes.set(castId, want);
      insertedCasts++;
      return castId;
    });
  };
  for (const layer of layers) {
    const { activationDtype: _frontendPin, ...base } = layer;
    const policy = policyOf(layer);
    const floats = layer.inputs.map((id) => dtypes.get(id)).filter((d): d is PinnedDtype => d !== undefined);
    let inputs = layer.inputs;
    let attrs = layer.attrs;
    let result: PinnedDtype;
    switch (policy) {
      case 'lower':
        inputs = castInputsTo(layer, low);
        result = low;
        break;
      case 'fp32-cast-inputs':
        inputs = castInputsTo(layer, 'fp32');
        result = 'fp32';
        break;
      case 'fp32-in-kernel':
      case 'weights':
        result = 'fp32';
        break;
      case 'cast': {
        // A cast back to another tensor's dtype (`.to(input_dtype)`, `.type_as(xq)`) takes what autocast gave that
        // tensor: fp32 for an RMSNorm's input on an fp32 residual stream, 16 bits for a projection's output.
        const from = floats[0] ?? low;
        result = (layer.attrs.to as PinnedDtype | undefined) ?? (layer.dtypeLike ? dtypes.get(layer.dtypeLike) : undefined) ?? low;
        attrs = { ...layer.attrs, from, to: result };
        break;
      }
      default:
        result = widest(floats, low);
    }
    if (result === 'fp32') fp32Layers++;
    const pinned = pin(result);
    out.push({ ...base, inputs, attrs, ...(pinned ? { activationDtype: pinned } : {}) });
    dtypes.set(layer.id, result);
  }
  return { layers: out, insertedCasts, fp32Layers };
}

/**
 * The model as autocast at `low` trains it, analysed again so every workload reflects the new dtypes. The model's
 * inputs, sequence and diagnostics are kept as they were; only the layers and totals change.
 */
export function autocastModel(model: AnalyzedModel, low: LowPrecision): { model: AnalyzedModel; insertedCasts: number; fp32Layers: number } {
  const specLayers: LayerSpec[] = model.layers.map(({ inputShapes: _s, outputShape: _o, workload: _w, weightOwner: _t, ...spec }) => spec);
  const floatInputs = new Set(model.inputs.filter((i) => i.dtype !== 'int').map((i) => i.id));
  const graph = autocastLayers(specLayers, floatInputs, low);
  const spec: ModelSpec = { name: model.name, framework: model.framework, range: model.range, layout: model.layout, inputs: model.inputs, layers: graph.layers, outputs: model.outputs, diagnostics: [] };
  const again = analyzeModel(spec, { dtypeBytes: model.dtypeBytes });
  return { model: { ...model, layers: again.layers, totals: again.totals }, insertedCasts: graph.insertedCasts, fp32Layers: graph.fp32Layers };
}
