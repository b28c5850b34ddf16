/**
 * The last step of "which model does this config train?" (see configDocs.ts):
 * the model the user picked for this config, remembered by the client per
 * config and sent with `wap/setConfigModels`. This file holds those choices
 * and words the diagnostic and its code actions, so the config room itself
 * stays about findings.
 *
 * VS Code (clientCommands) gets code actions that open the client's quick
 * pick; other editors get the same facts with the setting to write instead,
 * since they cannot run the client's command.
 */
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import { ClientActionCommands } from '../protocol/commands';

/** Where the config's model came from, for the wording and the way to change it. */
export type ModelSource = 'launch' | 'setting' | 'chosen' | 'none';

export const CHOOSE_TITLE = 'Choose the model this config trains…';
export const CHANGE_TITLE = 'Change the model this config is checked against…';
export const CHANGE_SETTING_TITLE = 'Change the wap.model setting…';

export class ConfigModelChoices {
  /** config URI → model file path. */
  private readonly chosen = new Map<string, string>();

  /** Replaces every choice; returns the configs whose choice changed (they need a re-check). */
  replace(models: Record<string, string> | undefined): string[] {
    const next = new Map<string, string>();
    for (const [config, model] of Object.entries(models ?? {})) {
      const path = typeof model === 'string' ? pathOf(model) : undefined;
      if (path) next.set(config, path);
    }
    const changed = new Set<string>();
    for (const [config, path] of next) if (this.chosen.get(config) !== path) changed.add(config);
    for (const config of this.chosen.keys()) if (!next.has(config)) changed.add(config);
    this.chosen.clear();
    for (const [config, path] of next) this.chosen.set(config, path);
    return [...changed];
  }

  get(configUri: string): string | undefined {
    return this.chosen.get(configUri);
  }
}

/** The label of a chosen model, which every finding of the config repeats: it names the file and how to change it. */
export function chosenLabel(modelPath: string, clientCommands: boolean): string {
  return clientCommands
    ? `${basename(modelPath)}, chosen for this config; quick fix "${CHANGE_TITLE}" to change it`
    : `${basename(modelPath)}, chosen for this config`;
}

/** The info diagnostic of a config without a model; `why` replaces "no launch script names it" where more is known. */
export function missingModelMessage(clientCommands: boolean, why = 'no launch script names it'): string {
  return clientCommands
    ? `WAP does not know which model this config trains: ${why}, and "wap.model" is not set. Quick fix "${CHOOSE_TITLE}" picks the model file (remembered for this config).`
    : `WAP does not know which model this config trains: ${why}. Set "wap.model" to the model file (Settings) so WAP can compare this config with its plan.`;
}

/**
 * The way to change the config's model, as a code action on its WAP diagnostics:
 * the quick pick when none was found or the user chose it, the setting when it
 * came from `wap.model`; none when the launch script decides (edit the script).
 */
export function modelChoiceAction(configUri: string, source: ModelSource, diagnostics: Diagnostic[]): CodeAction | undefined {
  if (diagnostics.length === 0) return undefined;
  if (source === 'none' || source === 'chosen') {
    const title = source === 'none' ? CHOOSE_TITLE : CHANGE_TITLE;
    return {
      title,
      kind: CodeActionKind.QuickFix,
      diagnostics,
      isPreferred: source === 'none',
      command: { title, command: ClientActionCommands.chooseConfigModel, arguments: [configUri] },
    };
  }
  if (source === 'setting') {
    // A setting link: VS Code's settings editor filtered to the one setting.
    return { title: CHANGE_SETTING_TITLE, kind: CodeActionKind.QuickFix, diagnostics, command: { title: CHANGE_SETTING_TITLE, command: 'workbench.action.openSettings', arguments: ['wap.model'] } };
  }
  return undefined;
}

function pathOf(uriOrPath: string): string | undefined {
  if (!uriOrPath) return undefined;
  if (!uriOrPath.startsWith('file:')) return uriOrPath;
  try {
    return fileURLToPath(uriOrPath);
  } catch {
    return undefined;
  }
}
