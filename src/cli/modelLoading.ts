/**
 * Model file → analysed models → the one a command works on. Every command
 * that takes a model file goes through here, so a missing file, a file with
 * no model or an unknown model name reads the same in all of them.
 */
import { resolve } from 'node:path';
import { launchedArguments } from '../configs/index';
import { splitCommands, unquote } from '../configs/shellWords';
import type { AnalysisResult, AnalyzedModel, AnalyzeOptions } from '../core/ir';
import { analyzeSource, sourceKindOf, type ImportOptions } from '../frontends/index';
import { probePython, resolvePython } from '../profiler/pythonEnv';
import { WHERE_WAP_LOOKS } from '../protocol/noModelText';
import { CliError } from './cliError';
import { parseShapeFlag, positiveInt } from './args';
import { diskFiles, readTextFile } from './files';

/** `--input` and `--seq-len` as given on the command line (unparsed), so each caller need not parse them. */
export interface ModelFlags {
  input?: string;
  /** `--seq-len T`: tokens per sample for a sequence model whose code does not state its length. */
  'seq-len'?: string;
  /** `--python PATH`: the interpreter whose site-packages imported libraries are read from. */
  python?: string;
  /** `--script-args "--n_layer 12 --bf16"`: the command line the script's argparse reads. */
  'script-args'?: string;
  /** Who states `seq-len` when the user did not (a training config's cutoff_len); absent, it is `--seq-len`. */
  sequenceSource?: string;
  /**
   * The command line a launch that `wap config` compares with passes the script (its own, not those every launch of
   * it shares); `--script-args` wins.
   */
  launchArguments?: { words: string[]; source: string };
  /** A folder on the script's import path besides its own: where a `python -m pkg.module` launch runs it from. */
  importRoot?: string;
}

/** parseArgs declaration of the flags every model-reading command takes besides `--input`. */
export const MODEL_SOURCE_FLAGS = { python: { type: 'string' }, 'seq-len': { type: 'string' }, 'script-args': { type: 'string' } } as const;

export const SEQ_LEN_HELP = '  --seq-len T           tokens per sample when the code does not state it (--input wins)';

export const SCRIPT_ARGS_HELP = `  --script-args="ARGS"  the arguments the script is run with, for its argparse (default: those of the launch script
                        beside it that runs it, else none: every option at its default)`;

export const MODEL_SOURCE_HELP = `${SEQ_LEN_HELP}
  --python PATH         interpreter whose installed libraries imports are read from (default: $WAP_PYTHON, python3)
${SCRIPT_ARGS_HELP}`;

/**
 * The command line the script's argparse reads: `--script-args` as a shell would split it, else the one the launch
 * scripts beside it agree on (configs/launchedBy.ts), else none.
 */
function scriptArgumentsFor(file: string, given: string | undefined, launch: ModelFlags['launchArguments']): AnalyzeOptions['scriptArguments'] {
  if (given !== undefined) return { words: splitCommands(given).flat().map((w) => unquote(w.raw, w.start).value), source: '--script-args' };
  return launch ?? launchedArguments(resolve(file), diskFiles);
}

/** Reads and analyses every model in `file`; at least one model or a CliError. */
export async function analyzeModelFile(file: string, flags: ModelFlags = {}): Promise<AnalysisResult> {
  if (!sourceKindOf(file)) throw new CliError(`'${file}' is not a model file: expected a .py, .ts/.js or .json file`);
  // Flags are checked before the file is read: a typo should not wait for a parse.
  const inputShape = flags.input !== undefined ? parseShapeFlag(flags.input) : undefined;
  const sequenceLength = positiveInt('seq-len', flags['seq-len']);
  const text = readTextFile(file);
  const scriptArguments = /\.py$/i.test(file) ? scriptArgumentsFor(file, flags['script-args'], flags.launchArguments) : undefined;
  const options: AnalyzeOptions = { ...(inputShape ? { inputShape } : {}), ...(sequenceLength !== undefined ? { sequenceLength, ...(flags.sequenceSource ? { sequenceSource: flags.sequenceSource } : {}) } : {}), ...(scriptArguments ? { scriptArguments } : {}) };
  const result = await analyzeFollowingImports(file, text, options, flags.python, flags.importRoot);
  if (result.models.length === 0) {
    // A Hydra _target_, an argument the run does not give, or an import that could not be followed is the likeliest
    // reason for "no model" in a training script.
    const firstError = result.diagnostics.find((d) => d.severity === 'error') ?? result.diagnostics.find((d) => d.code === 'hydra-target' || d.code === 'script-arguments-unknown') ?? result.diagnostics.find((d) => d.code === 'import-unresolved' || d.code === 'import-name-missing') ?? result.diagnostics.find((d) => d.severity === 'warning');
    // A message that ends its own sentence is not given a second period.
    const why = firstError ? `: ${firstError.file && firstError.file !== file ? `${firstError.file}:` : ''}${firstError.line}:${firstError.column}: ${firstError.message.replace(/\.$/, '')}` : '';
    throw new CliError(`no model found in '${file}'${why}. ${WHERE_WAP_LOOKS}`, 2, { file, diagnostics: result.diagnostics });
  }
  return result;
}

/** The model called `name`, or the first when no name is given. */
export function pickModel(result: AnalysisResult, name: string | undefined): AnalyzedModel {
  if (name === undefined) return result.models[0]!;
  const model = result.models.find((m) => m.name === name);
  if (!model) throw new CliError(`no model named '${name}' in '${result.file}' (found: ${result.models.map((m) => m.name).join(', ')})`);
  return model;
}

/** analyzeModelFile + pickModel: the single model a plan or a profile is made for. */
export async function loadModel(file: string, flags: ModelFlags & { modelName?: string }): Promise<AnalyzedModel> {
  return pickModel(await analyzeModelFile(file, flags), flags.modelName);
}

/**
 * Analyses with imports followed. The interpreter is asked for its `sys.path`
 * only when the file imports something outside the workspace and the modelled
 * libraries (the CLI runs in a trusted shell; `--python` chooses which one).
 */
async function analyzeFollowingImports(file: string, text: string, options: AnalyzeOptions, python: string | undefined, importRoot: string | undefined): Promise<AnalysisResult> {
  const base: ImportOptions = { workspaceFolders: [...(importRoot ? [resolve(importRoot)] : []), process.cwd()], wantedLibraries: new Set() };
  const first = await analyzeSource(file, text, options, { ...base, libraryNote: 'installed libraries were not looked up' });
  if (base.wantedLibraries!.size === 0) return first;
  const interpreter = resolvePython(python);
  const info = await probePython(interpreter);
  const imports: ImportOptions = info.ok
    ? { workspaceFolders: base.workspaceFolders, libraryRoots: info.sysPath, interpreter: info.executable ?? interpreter }
    : { workspaceFolders: base.workspaceFolders, libraryNote: `the interpreter could not be asked for its sys.path (${info.reason})`, interpreter };
  return analyzeSource(file, text, options, imports);
}
