/**
 * Training configs: detect, read, compare with the plan, edit; and plan export.
 * The LSP server and the CLI use only what is exported here.
 */
export type { ConfigFormat, ConfigFinding, ConfigFix, ConfigCheckResult, TextEdit, TextRange } from './types';
export { detectConfigFormats, initConfigReaders, checkConfig, fixAll, MAX_CONFIG_CHARS } from './check';
export { applyTextEdits } from './edits';
export { exportPlan, EXPORT_FORMATS, RENAMED_FORMATS, type ExportFormat, type ExportedFile } from './exportPlan';
export { precisionHint, precisionHintCandidates, withPrecisionFrom, type PrecisionHint } from './precisionHint';
export { optimizerHint, withOptimizerFrom, type OptimizerHint } from './optimizerHint';
export { trainingHintsApply, withTrainingHintsFrom } from './trainingHints';
export { comparedSetup, readConfigSetups, pinnedOptions, statedBatch, statedSequence, summarizeRun, versusLine, weighedByVersus, withStatedPrecision, withStatedFramework, type RunSummary } from './evaluate';
export { describeSetup, type StatedSetup } from './setup';
export { launchedScripts, configMentioned, localModelImports, namedModel, resolveLaunchedModel, type ModelTarget, type FileAccess } from './modelFor';
export { launchedArguments } from './launchedBy';
export { launchedSetupHint, withLaunchedSetup, type BatchHint, type BatchReading, type LaunchedSetupHint } from './launchedSetupHint';
export { isLaunchScriptName } from './launchScripts';
export { launchArgumentsOfModel } from './launchTargets';
export { planMachines, withLaunchScriptWorld } from './launchWorldSetup';
export { NAMED_FRAMEWORKS, withNamedFramework, type NamedFramework } from './namedFramework';
