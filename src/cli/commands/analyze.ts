/**
 * `wap analyze <file> [--model NAME] [--input C,H,W|T] [--batch N] [--json]`: the models in a
 * source file with per-layer output shapes, parameters and forward FLOPs.
 *
 * The JSON output is a contract other tools read; its field names are stable:
 * { file, framework, batch?, models: [{ name, line, input, layers: [{ name,
 * type, line, outputShape, params, forwardFlops, … }], totals: { params,
 * forwardFlops, … } }], diagnostics: [{ severity, message, line, column }] }.
 * FLOPs in JSON are per sample, but for a layer marked `oncePerForward: true` (per forward, whatever the batch;
 * totals.oncePerForward sums those); --batch scales the table and adds "batch".
 */
import { describeIncomplete } from '../../core/completeness';
import type { AnalysisResult, AnalyzedModel, Diagnostic, Shape } from '../../core/ir';
import { forwardFlopsOfBatch, runsOncePerForward, samplesRun } from '../../core/oncePerForward';
import { parseCommandArgs, positiveInt, singlePositional } from '../args';
import { MODEL_SOURCE_FLAGS, MODEL_SOURCE_HELP, analyzeModelFile, pickModel } from '../modelLoading';
import type { CliCommand } from './registry';

const HELP = `Usage: wap analyze <file> [--model NAME] [--input C,H,W|T] [--batch N] [--json]

Reads the models in a PyTorch / Keras (.py), TF.js (.ts/.js) or Keras JSON
topology (.json) file and prints each layer's output shape, parameters and
forward GFLOPs.

Options:
  --model NAME    show only this model (default: every model in the file)
  --input SHAPE   input shape without batch, e.g. 3,224,224 or 1024
  --batch N       batch size: table FLOPs are multiplied by N (default 1)
  --json          print machine-readable JSON instead of the table
${MODEL_SOURCE_HELP}`;

function allDiagnostics(result: AnalysisResult): Diagnostic[] {
  return [...result.diagnostics, ...result.models.flatMap((m) => m.diagnostics)];
}

function showShape(shape: Shape | undefined): string {
  return shape ? `[${shape.join(', ')}]` : '?';
}

function gflops(flops: number): string {
  return (flops / 1e9).toFixed(4);
}

function alignTable(header: string[], rows: string[][], rightAligned: Set<number>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

function modelTable(model: AnalyzedModel, batch: number): string[] {
  const scale = batch;
  const flopsHeader = batch > 1 ? `Fwd GFLOPs (batch ${batch})` : 'Fwd GFLOPs';
  const rows = model.layers.map((l) => [l.name, l.type, String(l.range.line), showShape(l.outputShape), l.workload.params.toLocaleString('en-US'), gflops(l.workload.forwardFlops * samplesRun(l, scale))]);
  rows.push([model.completeness && !model.completeness.complete ? 'Total (incomplete)' : 'Total', '', '', '', model.totals.params.toLocaleString('en-US'), gflops(forwardFlopsOfBatch(model.totals, scale))]);
  const input = `${showShape(model.input)}${model.inputAssumed ? ' (assumed)' : ''}`;
  const title = `Model ${model.name} (line ${model.range.line}, ${model.framework}, ${model.layout}), input ${input}`;
  const incomplete = describeIncomplete(model.completeness);
  // Said above the table, not only in the diagnostics below it: the totals undercount.
  const warning = incomplete ? [`${incomplete} — totals cover only what WAP could read (${model.completeness!.reasons.slice(0, 3).join('; ')})`] : [];
  return [title, ...warning, ...alignTable(['Layer', 'Type', 'Line', 'Output shape', 'Params', flopsHeader], rows, new Set([2, 4, 5]))];
}

function toJson(file: string, result: AnalysisResult, batch: number | undefined): unknown {
  return {
    file,
    framework: result.framework,
    ...(batch !== undefined ? { batch } : {}),
    models: result.models.map((m) => ({
      name: m.name,
      line: m.range.line,
      framework: m.framework,
      layout: m.layout,
      input: m.input,
      inputAssumed: m.inputAssumed,
      inputs: m.inputs,
      outputs: m.outputs,
      layers: m.layers.map((l) => ({
        id: l.id,
        name: l.name,
        type: l.type,
        op: l.op,
        line: l.range.line,
        column: l.range.column,
        inputs: l.inputs,
        outputShape: l.outputShape ?? null,
        params: l.workload.params,
        nonTrainable: l.workload.nonTrainable,
        forwardFlops: l.workload.forwardFlops,
        backwardFlops: l.workload.backwardFlops,
        activationBytes: l.workload.activationBytes,
        ...(l.weightOwner ? { weightOwner: l.weightOwner } : {}),
        ...(runsOncePerForward(l) ? { oncePerForward: true } : {}),
      })),
      totals: { ...m.totals, ...(batch !== undefined ? { forwardFlopsBatch: forwardFlopsOfBatch(m.totals, batch) } : {}) },
      completeness: m.completeness ?? null,
    })),
    diagnostics: allDiagnostics(result).map((d) => ({ severity: d.severity, message: d.message, line: d.line, column: d.column, ...(d.code ? { code: d.code } : {}), ...(d.file ? { file: d.file } : {}) })),
  };
}

async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('analyze', HELP, args, { ...MODEL_SOURCE_FLAGS, model: { type: 'string' }, input: { type: 'string' }, batch: { type: 'string' }, json: { type: 'boolean' } });
  if (!parsed) return 0;
  const values = parsed.values;
  const file = singlePositional('analyze', parsed.positionals, 'model file');
  const batch = positiveInt('batch', values.batch);
  const analysis = await analyzeModelFile(file, values);
  // --model narrows the output to one model; file-level diagnostics are kept.
  const result = values.model !== undefined ? { ...analysis, models: [pickModel(analysis, values.model)] } : analysis;
  if (values.json) {
    console.log(JSON.stringify(toJson(file, result, batch), null, 2));
    return 0;
  }
  const out: string[] = [];
  for (const model of result.models) out.push(...modelTable(model, batch ?? 1), '');
  for (const d of allDiagnostics(result)) out.push(`${d.file ?? file}:${d.line}:${d.column}: ${d.severity}: ${d.message}`);
  console.log(out.join('\n').trimEnd());
  return 0;
}

export const analyzeCommand: CliCommand = {
  summary: 'per-layer output shapes, parameters and FLOPs of the models in a file',
  run,
};
