/**
 * Forward passes that compute sizes from their input (`b, c, h, w = x.size()`
 * then `x.view(b, groups, c // groups, h, w)`; a window partition's
 * `H // window`) cannot be read while the input's size is unknown. When a
 * first reading stalls on such a size, the model is read again with the input
 * the analysis would assume anyway (core/inputDefaults.ts), and every recorded
 * layer's output shape is worked out as it is recorded (the core catalogue's
 * own shape rules), so `x.size()` answers with numbers. The model's input then
 * carries that shape as an assumed one, and an info diagnostic says the graph
 * was read for it: another input size needs the model read again.
 */
import { inferLayer, isInferError } from '../../core/catalogue/index';
import { assumeInput } from '../../core/inputDefaults';
import type { AnalyzeOptions, Diagnostic, LayerSpec, ModelSpec } from '../../core/ir';
import { torchDims } from './batchFolding';
import type { Graph } from './graph';
import { UNKNOWN, int, type Dims, type TensorV, type Value } from './values';

/** The output shape of a layer from its inputs' known shapes; `given` when they are not all known. */
export function concreteShape(shapes: ReadonlyMap<string, Dims | undefined>, layer: Omit<LayerSpec, 'id'>, given: Dims | undefined): Dims | undefined {
  const ins = layer.inputs ?? [];
  if (ins.length === 0 || layer.op === 'opaque') return given;
  const known: number[][] = [];
  for (const id of ins) {
    const s = shapes.get(id);
    if (!s || s.length === 0 || s.slice(1).some((d) => d === undefined)) return given;
    known.push(s.slice(1) as number[]);
  }
  const r = inferLayer(layer.op, known, layer.attrs ?? {}, { layout: 'channels_first', dtypeBytes: 4 });
  if (isInferError(r)) return given;
  return [undefined, ...r.outputShape];
}

/**
 * The input a stalled first reading is read again with: the one the user gave (`--input`, or `--seq-len` for a
 * sequence), else for a sequence the run's length (`--block_size` on its command line, runSequence.ts), else what the
 * analysis would assume for it. The analysis then runs the graph at that same size.
 */
export function specialisedInput(first: ModelSpec, given: AnalyzeOptions = {}, run?: { tokens: number; source: string }): { shape: number[]; what: string; tokens?: true } {
  if (given.inputShape?.length) return { shape: [...given.inputShape], what: 'the given input' };
  const guess = assumeInput(first);
  // Token ids: the analysis assumes the forward's other inputs (an attention mask, labels) the same, and so does the reading.
  const tokens = guess.sequence && guess.dtype === 'int' ? { tokens: true as const } : {};
  if (guess.sequence && given.sequenceLength) return { shape: [given.sequenceLength, ...guess.shape.slice(1)], what: `${guess.what}, at the given length`, ...tokens };
  if (guess.sequence && run) return { shape: [run.tokens, ...guess.shape.slice(1)], what: `a sequence of ${run.tokens} token ids, the run's ${run.source}`, ...tokens };
  return { shape: [...guess.shape], what: guess.what, ...tokens };
}

export function specialisedNote(spec: ModelSpec, shape: number[]): Diagnostic {
  const r = spec.range;
  return {
    severity: 'info',
    code: 'specialised-input',
    message:
      `${spec.name}'s forward computes sizes from its input's shape: WAP read it for an input of [${shape.join(', ')}] (without batch). ` +
      'For another size, give it (`--input`), or run the model on an example of that size in the code (`model(torch.randn(…))`).',
    line: r.line,
    column: r.column,
    endLine: r.endLine,
    endColumn: r.endColumn,
  };
}

/**
 * `x.dim()` / `x.ndim` (torch's rank). Code that branches on the rank (`if x.dim() == 4: x = x.unsqueeze(2)`) cannot be read
 * while it is unknown: the first reading is marked stalled, so the model is read again with the input known.
 */
export function rankValue(graph: Graph | undefined, t: TensorV): Value {
  // torch's rank: windows folded into the batch are one torch axis, a parameter's placeholder batch none.
  const dims = torchDims(t);
  if (dims) return int(t.unbatched ? dims.length - 1 : dims.length);
  if (graph && !graph.concrete) graph.starved = true;
  return UNKNOWN;
}
