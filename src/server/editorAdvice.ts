/**
 * Advice, worded for the editor. The rooms that find problems (core, planner,
 * configs, validate) word their advice for their first surface, the CLI
 * ("Override with `--input 3,224,224`", "see `wap export --format …`"), and
 * the CLI keeps that wording. In the editor a flag means nothing: the same
 * advice must name what the editor offers — a setting, a command, a quick
 * fix. Every text the server sends to the editor (diagnostics, hovers,
 * request errors) goes through `forEditor`; test/server/editorAdvice.test.ts
 * checks that no CLI flag is left in what the examples produce.
 *
 * Where a piece of advice has a click (the torch-parallelize export), the
 * config room also offers it as a code action: see `adviseExport` below.
 */
import type { PlanOutcome } from '../protocol/plan';

/** The CLI advice to export runnable parallelize() code, as the configs room words it. */
const EXPORT_CLI = /`wap export --format torch-parallelize`/;
/** The command palette title and format the editor offers for it (src/extension/exports.ts). */
export const EXPORT_PARALLELIZE_TITLE = 'Export the plan as PyTorch parallelize() code…';
const EXPORT_EDITOR = '"WAP: Export plan as…" → PyTorch parallelize() (quick fix)';

const DEGREE_FLAGS: Record<string, string> = {
  '--tp': 'tensor parallel',
  '--pp': 'pipeline stages',
  '--dp': 'data parallel',
  '--cp': 'context parallel',
  '--ep': 'expert parallel',
  '--micro-batch': 'micro-batch',
};

/** Where the code states a model's input: what frontends/python reads (models.ts exampleInput, Keras's input_shape). */
const STATE_INPUT = ' To change it, state the input shape in the model code: run the model on an example (`model(torch.randn(8, 3, 32, 32))`), set a LightningModule\'s `example_input_array`, or give Keras an `input_shape`.';

const RULES: Array<[RegExp, string | ((...groups: string[]) => string)]> = [
  // Input shapes: the editor reads them from the code, so that is where the user states one.
  [/ Override with `--input [\d,]+`(, `--seq-len T`)? or state the shape in the model code\./g, STATE_INPUT],
  [/ Override with `--input [\d,]+`( or `--seq-len T`)?\./g, STATE_INPUT],
  [/; give one with --input/g, '; state a fixed one in the model code'],
  [/ For another size, give it \(`--input`\), or run/g, ' For another size, run'],
  [/; `--input` reads it for another\./g, '; an example of another size in the code reads it for that one.'],
  [/; pass --(input|seq-len) to set it/g, '; state the input shape in the model code to set it'],
  // Exports: the command, with a quick fix where the finding sits in a config.
  [/export the plan with `wap export --format torch-parallelize`/g, `export the plan with ${EXPORT_EDITOR}`],
  [/\(export runnable code with `wap export --format torch-parallelize`\)/g, `(export runnable code with ${EXPORT_EDITOR})`],
  [/see `wap export --format torch-parallelize`/g, `see ${EXPORT_EDITOR}`],
  // A config without a model: the no-model diagnostic beside it says how to choose one.
  [/ \(wap config --model …\)/g, ' (see the note on choosing the model)'],
  // Planner options the editor takes from settings and the plan view.
  [/--gpus (\d+) asks for more GPUs/g, (n) => `${n} GPUs (the plan view's GPU count) ask for more GPUs`],
  [/not the (\d+) GPUs of --gpus/g, (n) => `not the ${n} GPUs chosen in the plan view`],
  [/not --gpus (\d+)/g, (n) => `not the ${n} GPUs chosen in the plan view`],
  [/or choose another --precision/g, 'or choose another precision (the wap.precision setting)'],
  [/\(from --precision\)/g, '(from the wap.precision setting)'],
  [/^--precision$/g, 'the wap.precision setting'],
  [/(--tp|--pp|--dp|--cp|--ep|--micro-batch) (\d+)/g, (flag, n) => `${DEGREE_FLAGS[flag]} ${n}`],
  [/\(--pp > 1\)/g, '(more than one pipeline stage)'],
  // Validation: the interpreter comes from the Python extension or wap.python.
  [/choose an interpreter with torch \(--python\)/g, 'select an interpreter with torch (Python extension, or the wap.python setting)'],
];

/** The editor's wording of a text the rooms worded for the CLI. */
export function forEditor(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, (_m, ...groups: string[]) => replacement(...groups));
  }
  return out;
}

/** Whether a finding's (CLI-worded) message advises exporting parallelize() code: the config room then offers the export as a quick fix. */
export function adviseExport(message: string): boolean {
  return EXPORT_CLI.test(message);
}

/** A plan result for the plan view: its planner notes and "no plan fits" reason in the editor's wording. */
export function outcomeForEditor<T extends { outcome: PlanOutcome }>(result: T): T {
  const o = result.outcome;
  const diagnostics = o.diagnostics.map((d) => ({ ...d, message: forEditor(d.message) }));
  const outcome: PlanOutcome = o.feasible ? { ...o, diagnostics } : { ...o, diagnostics, reason: forEditor(o.reason) };
  return { ...result, outcome };
}
