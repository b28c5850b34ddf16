/**
 * Command ids and code action kinds shared by the server and the VS Code
 * extension. Plain constants with no imports: the extension reads them while
 * activating, before the (large) protocol library is loaded.
 */

/** Commands the server executes through `workspace/executeCommand`. */
export const ServerCommands = {
  /** args: [uri, model?] → PlanResult; plans (and profiles when `wap.profile.enabled` and trusted). */
  parallelizeModel: 'wap.server.parallelizeModel',
  /** args: [uri, model?] → Markdown summary of the last plan (or a fresh one). */
  planSummary: 'wap.server.planSummary',
  /** args: [uri] → applies every config fix in that document through workspace/applyEdit. */
  fixAllConfig: 'wap.server.fixAllConfig',
} as const;

/** Commands the VS Code extension registers (package.json `contributes.commands`). */
export const ClientCommands = {
  parallelizeModel: 'wap.parallelizeModel',
  showPlan: 'wap.showPlan',
  profileLayers: 'wap.profileLayers',
  selectCluster: 'wap.selectCluster',
  exportTimeline: 'wap.exportTimeline',
  exportPlan: 'wap.exportPlan',
  validatePlan: 'wap.validatePlan',
} as const;

/** Commands the extension registers for code actions only (not in the command palette). */
export const ClientActionCommands = {
  /** args: [key under `wap.`, value, documentUri]: writes the setting for that document's workspace folder. */
  applySetting: 'wap.applySetting',
  /** args: [configUri]: asks which model file the config trains (quick pick), remembers it, tells the server. */
  chooseConfigModel: 'wap.chooseConfigModel',
} as const;

/** The code action kind of "Fix all WAP config issues". */
export const FIX_ALL_KIND = 'source.fixAll.wap';
