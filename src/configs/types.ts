/**
 * The contract of the config room: what a format module reads out of a
 * training config, and what comes back to the LSP server and the CLI.
 * Offsets are UTF-16 code units into the text (what VS Code and JS strings use).
 */

export type ConfigFormat = 'accelerate' | 'deepspeed' | 'lightning' | 'lightning-yaml' | 'keras-mirrored' | 'torchrun' | 'deepspeed-launch' | 'cuda-visible-devices' | 'torchtitan' | 'megatron' | 'hf-trainer' | 'hf-trainer-args' | 'hf-trainer-recipe' | 'axolotl' | 'torch-script';

export interface TextRange {
  start: number;
  end: number;
}

export interface TextEdit extends TextRange {
  newText: string;
}

export interface ConfigFix {
  title: string;
  edits: TextEdit[];
  preferred?: boolean;
  /** Changes what is trained (the global batch): offered on its own, never part of "Fix all". */
  changesTraining?: boolean;
}

export interface ConfigFinding {
  format: ConfigFormat;
  severity: 'error' | 'warning' | 'info';
  /** Stable id, e.g. 'gpu-count', 'batch-arithmetic', 'malformed-config'. */
  code: string;
  message: string;
  /** The exact value the finding is about. */
  range: TextRange;
  fix?: ConfigFix;
}

/**
 * Reads other files for a config room that must stay pure: the CLI passes the disk, the LSP server its open buffers
 * first. `read` gives undefined for a file that is not there or cannot be read.
 */
export interface FileAccess {
  read(path: string): string | undefined;
  list(dir: string): string[];
  /**
   * The config.json `from_pretrained(ref)` would load, read from `fromFile`'s folder (a local folder, then the hub
   * cache; never the network), or undefined when it is not on disk. The caller's frontends know where to look.
   */
  pretrainedConfig?(ref: string, fromFile: string): string | undefined;
}

export interface ConfigCheckResult {
  formats: ConfigFormat[];
  findings: ConfigFinding[];
}

/** A value read from a config, where it sits, and how to rewrite it. */
export interface ConfigValue<T> {
  value: T;
  range: TextRange;
  /** Edits that set this value; undefined when the value cannot be rewritten mechanically. */
  set?: (next: T) => TextEdit[];
}

/**
 * What a launch config says about the run, normalised across formats so one
 * comparison with the plan (compare.ts) serves every format.
 */
export interface LaunchSettings {
  /** Processes (GPUs) per machine. */
  perNode?: ConfigValue<number>;
  /** Machines. */
  nodes?: ConfigValue<number>;
  /** Total processes when the format states the total itself (Accelerate's num_processes). */
  total?: ConfigValue<number>;
  /** Explicit device ids (gpu_ids, CUDA_VISIBLE_DEVICES, MirroredStrategy devices, Trainer devices=[…]). */
  deviceIds?: ConfigValue<number[]>;
  /**
   * How the config parallelises: 'data' for plain data parallelism (DDP, MULTI_GPU,
   * MirroredStrategy), 'sharded' for ZeRO/FSDP (still data parallel per layer),
   * 'single', or 'other' for strategies WAP does not model.
   */
  parallelism?: ConfigValue<'data' | 'sharded' | 'single' | 'other'>;
}

/** How a launch command names a config's file: as the script it runs, or among that script's arguments (a recipe). */
export type LaunchedAs = 'script' | 'argument';

/** One format: detect it cheaply, then read, compare and offer edits in one pass. */
export interface ConfigReader {
  format: ConfigFormat;
  /** Cheap, content-based; must not parse. */
  detect(fileName: string, text: string): boolean;
  /**
   * Every finding for this format, plan-dependent ones only when a plan is given. Never throws. `files` reads what
   * the config refers to (a DeepSpeed JSON by path); without it such a reference is reported as not read.
   */
  check(fileName: string, text: string, plan: import('../protocol/plan').PlanReport | undefined, files?: FileAccess): ConfigFinding[];
  /**
   * How launch scripts name this format's files: as the script they run (the default), or among its arguments (a
   * recipe the script loads). The GPU count of a setup that states none is theirs (launchedBy.ts).
   */
  launchedAs?: LaunchedAs;
  /**
   * The training setup the config states (for planning "your config" with it pinned); may throw MalformedConfig.
   * `files` reads the script a launch runs, where what the setup means depends on it.
   */
  readSetup?(fileName: string, text: string, files?: FileAccess): import('./setup').StatedSetup | undefined;
}

/** Raised inside readers for bad input; index.ts turns it into one 'malformed-config' finding. */
export class MalformedConfig extends Error {
  constructor(message: string, readonly range: TextRange = { start: 0, end: 0 }) {
    super(message);
  }
}
