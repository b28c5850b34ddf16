/**
 * A model's input shapes, and for sequence models where their token count
 * came from. In order of precedence:
 * 1. `--input` (options.inputShape) for the first input;
 * 2. a shape the code states;
 * 3. `--seq-len` (options.sequenceLength), else the run's own length
 *    (spec.runSequence: `--block_size 1024` on the script's command line), for
 *    a token sequence whose length the code does not state: a frontend's
 *    default that the graph does not depend on (a Hugging Face config's max
 *    positions), or no shape at all when the assumed input is a sequence
 *    (core/inputDefaults.ts);
 * 4. the frontend's or the core's assumed default, said in a diagnostic.
 * A `--seq-len` that cannot apply says why instead of being dropped silently.
 */
import { showShape } from './catalogue/attrs';
import type { AnalyzeOptions, Diagnostic, ModelInput, ModelSpec, SequenceInfo, Shape } from './ir';
import { diagnosticAt as diag } from './ir';
import { assumeInput } from './inputDefaults';
import { withProps } from './objects';

export interface ResolvedInputs {
  inputs: Array<ModelInput & { shape: Shape }>;
  /** True when some input's shape is a default rather than stated in code or given by the user. */
  assumed: boolean;
  /** The first token sequence's length and where it came from; absent when no input is known to be a sequence. */
  sequence?: SequenceInfo;
}

function isShape(v: unknown): v is Shape {
  return Array.isArray(v) && v.every((d) => typeof d === 'number' && Number.isInteger(d) && d > 0);
}

/** Which axis of a shape counts tokens: the last of token ids ([T], [choices, T]); the first of float steps ([T, features]). */
function tokenAxis(shape: Shape, dtype: ModelInput['dtype']): number {
  return dtype === 'int' ? shape.length - 1 : 0;
}

function withLength(shape: Shape, axis: number, length: number): Shape {
  return shape.map((d, i) => (i === axis ? length : d));
}

/**
 * How the user may set an assumed input: `--input` sets the first input only, so a later one (an encoder-decoder's
 * decoder_input_ids, a vision-language model's pixel_values) is offered `--seq-len` or the code, never a flag that
 * would size another input.
 */
function overrideHint(index: number, shape: readonly number[], tokenAxis: number | undefined, orCode = false): string {
  const ways = [...(index === 0 ? [`\`--input ${shape.join(',')}\``] : []), ...(tokenAxis !== undefined ? ['`--seq-len T`'] : []), ...(orCode || index > 0 ? ['state the shape in the model code'] : [])];
  return `Override with ${ways.length > 1 ? `${ways.slice(0, -1).join(', ')} or ${ways[ways.length - 1]}` : ways[0]}`;
}

/** How one input got its shape: 'given' (--input), 'code', 'seq-len', or 'assumed' with the words for it. */
type Origin = { kind: 'given' | 'code' | 'seq-len' } | { kind: 'assumed'; what: string };

export function resolveInputs(spec: ModelSpec, options: AnalyzeOptions, diagnostics: Diagnostic[]): ResolvedInputs {
  const declared: ModelInput[] = spec.inputs && spec.inputs.length > 0 ? spec.inputs : [{ id: 'input' }];
  let override: Shape | undefined;
  if (options.inputShape !== undefined) {
    if (isShape(options.inputShape) && options.inputShape.length > 0) override = options.inputShape;
    else diagnostics.push(diag('error', 'bad-input-shape', `The given input shape ${JSON.stringify(options.inputShape)} is not a list of positive integers; it is ignored.`, spec.range));
  }
  let seqLen: number | undefined;
  if (options.sequenceLength !== undefined) {
    if (Number.isInteger(options.sequenceLength) && options.sequenceLength > 0) seqLen = options.sequenceLength;
    else diagnostics.push(diag('error', 'bad-sequence-length', `The given sequence length ${JSON.stringify(options.sequenceLength)} is not a positive integer; it is ignored.`, spec.range));
  }
  const seqFlag = `--seq-len ${seqLen}`;
  // The run's length applies where --seq-len would, and says nothing where it cannot: it is the script's, not a flag.
  const fromRun = seqLen === undefined && spec.runSequence !== undefined && Number.isInteger(spec.runSequence.tokens) && spec.runSequence.tokens > 0;
  if (fromRun) seqLen = spec.runSequence!.tokens;
  let assumed = false;
  let sequence: SequenceInfo | undefined;
  // Whether --seq-len set some input's length, and why not when it set none (said once, after the loop).
  let seqApplied = false;
  let seqUnused: string | undefined;
  const note = (input: ModelInput & { shape: Shape }, axis: number | undefined, origin: Origin): void => {
    if (sequence || axis === undefined) return;
    const length = input.shape[axis];
    const lengthFrom = fromRun ? spec.runSequence!.source : (options.sequenceSource ?? '--seq-len');
    // A call in the code at the run's own length (nanoGPT's training step samples (batch_size, block_size)) names it.
    const fromCode = fromRun && length === seqLen ? lengthFrom : 'stated in the code';
    const source = origin.kind === 'assumed' ? `assumed: ${origin.what}` : { given: '--input', code: fromCode, 'seq-len': lengthFrom }[origin.kind];
    sequence = { input: input.id, length, source, assumed: origin.kind === 'assumed' };
  };

  const inputs = declared.map((input, i) => {
    if (i === 0 && override) {
      const resolved = withProps(input, { shape: override });
      note(resolved, input.dtype === 'int' ? tokenAxis(override, 'int') : undefined, { kind: 'given' });
      if (seqLen !== undefined) seqUnused ??= `--input ${override.join(',')} gives ${spec.name}'s input shape`;
      return resolved;
    }
    if (isShape(input.shape)) {
      const resolved = withProps(input, { shape: input.shape });
      const axis = input.dtype === 'int' ? tokenAxis(input.shape, 'int') : undefined;
      if (typeof input.assumed !== 'string') {
        note(resolved, axis, { kind: 'code' });
        if (seqLen !== undefined && axis !== undefined) seqUnused ??= `the code states ${input.shape[axis]} tokens for ${spec.name} input '${input.id}'`;
        return resolved;
      }
      // A default the frontend chose (e.g. a Hugging Face config's max positions).
      if (seqLen !== undefined && axis !== undefined && input.lengthFree) {
        const sized = withProps(input, { shape: withLength(input.shape, axis, seqLen) });
        seqApplied = true;
        note(sized, axis, { kind: 'seq-len' });
        return sized;
      }
      // Read at the run's own length (the script's `--block_size`): only the input's form was assumed, not its length.
      if (fromRun && axis !== undefined && input.shape[axis] === seqLen) {
        note(resolved, axis, { kind: 'seq-len' });
        return resolved;
      }
      if (seqLen !== undefined && axis !== undefined) seqUnused ??= `${spec.name} was read for ${showShape(input.shape)} (${input.assumed}); another length needs the code to state it`;
      assumed = true;
      note(resolved, axis, { kind: 'assumed', what: input.assumed });
      diagnostics.push(
        diag('info', 'assumed-input', `No input shape for ${spec.name} input '${input.id}': assumed ${showShape(input.shape)}, ${input.assumed}, without batch. ${overrideHint(i, input.shape, axis)}.`, spec.range),
      );
      return resolved;
    }
    const guess = assumeInput(spec);
    const dtype = input.dtype ?? guess.dtype;
    const axis = guess.sequence ? tokenAxis(guess.shape, dtype) : undefined;
    if (seqLen !== undefined && axis !== undefined) {
      const sized = withProps(input, { shape: withLength(guess.shape, axis, seqLen), dtype });
      seqApplied = true;
      note(sized, axis, { kind: 'seq-len' });
      return sized;
    }
    if (seqLen !== undefined) seqUnused ??= `${spec.name} takes ${guess.what}, not a token sequence`;
    assumed = true;
    const resolved = withProps(input, { shape: guess.shape, dtype });
    note(resolved, axis, { kind: 'assumed', what: guess.what });
    diagnostics.push(
      diag(
        'info',
        'assumed-input',
        `No input shape for ${spec.name}${declared.length > 1 ? ` input '${input.id}'` : ''}: assumed ${showShape(guess.shape)}, ${guess.what}, without batch. ` +
          `${overrideHint(i, guess.shape, axis, true)}.`,
        spec.range,
      ),
    );
    return resolved;
  });
  // A config's length that cannot apply is a note: the user asked for nothing.
  const unusedFrom = options.sequenceSource ? { severity: 'info' as const, what: `${options.sequenceSource} (${seqLen} tokens)` } : { severity: 'warning' as const, what: seqFlag };
  if (seqLen !== undefined && !seqApplied && !fromRun) diagnostics.push(diag(unusedFrom.severity, 'sequence-length-unused', `${unusedFrom.what} is not used: ${seqUnused ?? `${spec.name} has no token-sequence input`}.`, spec.range));
  for (const input of inputs) {
    const limit = input.maxLength;
    const axis = input.dtype === 'int' ? tokenAxis(input.shape, 'int') : undefined;
    if (limit && axis !== undefined && input.shape[axis] > limit.tokens) {
      diagnostics.push(diag('warning', 'sequence-too-long', `${spec.name} input '${input.id}' has ${input.shape[axis]} tokens, more than the ${limit.tokens} positions ${limit.what}.`, spec.range));
    }
  }
  return { inputs, assumed, ...(sequence ? { sequence } : {}) };
}
