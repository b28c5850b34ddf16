/** Registers the WAP commands. Each waits for the language client, then talks to the server. */
import * as vscode from 'vscode';
import type { WapClient } from './client';
import { ClientActionCommands, ClientCommands } from '../protocol/commands';
import type { ModelRef, PlanResult } from '../protocol/lsp';

export function registerCommands(context: vscode.ExtensionContext, ready: () => Promise<WapClient | undefined>, output: vscode.OutputChannel): void {
  // The panel host and pickers are loaded on first use, keeping activation light.
  let panels: import('./planPanel').PlanPanels | undefined;
  const client = async () => (await ready())?.client;
  const getPanels = async () => {
    if (!panels) {
      const { PlanPanels } = await import('./planPanel');
      panels = new PlanPanels(context.extensionUri, output, client);
      context.subscriptions.push(panels);
      const c = await client();
      if (c) {
        const { PlansStaleNotification } = await import('../protocol/lsp');
        const host = panels;
        context.subscriptions.push(c.onNotification(PlansStaleNotification, (p) => host.refreshAll(p.reason)));
      }
    }
    return panels;
  };

  const run = (name: string, fn: (...args: unknown[]) => Promise<void>) =>
    vscode.commands.registerCommand(name, async (...args: unknown[]) => {
      try {
        await fn(...args);
      } catch (err) {
        const { isCancellation } = await import('./progress');
        if (isCancellation(err)) return;
        const message = err instanceof Error ? err.message : String(err);
        output.appendLine(`WAP: ${name} failed: ${err instanceof Error ? (err.stack ?? message) : message}`);
        void vscode.window.showErrorMessage(`WAP: ${message.replace(/^wap: /, '')}`);
      }
    });

  const target = async (args: unknown[]): Promise<{ ref: ModelRef; c: NonNullable<Awaited<ReturnType<typeof client>>> } | undefined> => {
    const c = await client();
    if (!c) return undefined;
    const { pickModel } = await import('./modelPicker');
    const ref = await pickModel(c, args);
    return ref ? { ref, c } : undefined;
  };

  const planAndShow = async (args: unknown[], mode: 'parallelize' | 'profile' | 'show') => {
    const t = await target(args);
    if (!t) return;
    const { withServerProgress } = await import('./progress');
    const { PlanRequest, ProfileRequest } = await import('../protocol/lsp');
    const profileFirst = mode === 'profile' || (mode === 'parallelize' && vscode.workspace.getConfiguration('wap', vscode.Uri.parse(t.ref.uri)).get<boolean>('profile.enabled') === true);
    if (profileFirst && !vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('WAP: profiling runs trials in a worker process, which is off in an untrusted workspace; planning with estimated costs instead.');
    }
    const label = t.ref.model ?? 'model';
    const result: PlanResult = await withServerProgress(t.c, mode === 'show' ? `WAP: loading the plan of ${label}` : profileFirst && vscode.workspace.isTrusted ? `WAP: profiling and planning ${label}` : `WAP: planning ${label}`, (token, workDoneToken) =>
      profileFirst && vscode.workspace.isTrusted
        ? t.c.sendRequest(ProfileRequest, { ...t.ref, workDoneToken }, token)
        : t.c.sendRequest(PlanRequest, { ...t.ref, workDoneToken, reuse: mode === 'show' }, token),
    );
    (await getPanels()).createOrShow(t.ref, result);
  };

  context.subscriptions.push(
    run(ClientCommands.parallelizeModel, (...args) => planAndShow(args, 'parallelize')),
    run(ClientCommands.showPlan, (...args) => planAndShow(args, 'show')),
    run(ClientCommands.profileLayers, (...args) => planAndShow(args, 'profile')),
    run(ClientCommands.selectCluster, async () => {
      const { selectCluster } = await import('./clusterPicker');
      await selectCluster(await client());
    }),
    run(ClientCommands.exportTimeline, async (...args) => {
      const t = await target(args);
      if (t) await (await import('./exports')).exportTimeline(t.c, t.ref);
    }),
    // Code actions (e.g. "Use batch 32") write a wap.* setting where the document's folder reads it.
    run(ClientActionCommands.applySetting, async (key, value, uri) => {
      if (typeof key !== 'string' || !/^[A-Za-z][\w.]*$/.test(key)) throw new Error(`not a WAP setting: ${String(key)}`);
      const scope = typeof uri === 'string' ? vscode.Uri.parse(uri) : undefined;
      const folder = scope ? vscode.workspace.getWorkspaceFolder(scope) : undefined;
      const target = folder ? vscode.ConfigurationTarget.WorkspaceFolder : vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      await vscode.workspace.getConfiguration('wap', scope).update(key, value, target);
      void vscode.window.showInformationMessage(`WAP: set wap.${key} to ${JSON.stringify(value)}${folder ? ` for ${folder.name}` : ''}; plans refresh.`);
    }),
    // The config quick fix "Choose the model this config trains…": a quick pick, remembered per config.
    run(ClientActionCommands.chooseConfigModel, async (configUri) => {
      const c = await client();
      if (c) await (await import('./configModels')).chooseConfigModel(context, c, configUri);
    }),
    run(ClientCommands.exportPlan, async (...args) => {
      const t = await target(args);
      // A config's quick fix names the format (args: uri, model, format); the palette asks for it.
      if (t) await (await import('./exports')).exportPlanAs(t.c, t.ref, typeof args[2] === 'string' ? args[2] : undefined);
    }),
    run(ClientCommands.validatePlan, async (...args) => {
      // Starts training processes: trusted workspaces only (the server refuses too).
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('WAP: validating runs training processes with torchrun, which is off in an untrusted workspace.');
        return;
      }
      const t = await target(args);
      if (!t) return;
      const devices = await vscode.window.showInputBox({ title: 'WAP: Validate Plan on which devices?', prompt: 'cpu:N (gloo processes) or cuda:0,1,… (NCCL)', value: 'cpu:2' });
      if (!devices) return;
      const { withServerProgress } = await import('./progress');
      const { ValidateRequest } = await import('../protocol/lsp');
      const r = await withServerProgress(t.c, `WAP: validating ${t.ref.model ?? 'model'} on ${devices}`, (token, workDoneToken) => t.c.sendRequest(ValidateRequest, { ...t.ref, devices, workDoneToken }, token));
      output.appendLine(`WAP: validate ${r.model} at batch ${r.batch} on ${r.devicesDescription}, torch ${r.torchVersion} (${r.python})`);
      for (const p of r.phases) output.appendLine(`  ${p.label}: predicted ${p.predictedMs.toFixed(1)} ms, measured ${p.measuredMs.toFixed(1)} ms (${p.ratio.toFixed(2)})`);
      for (const n of r.notValidated) output.appendLine(`  not validated: ${n}`);
      output.show(true);
      void vscode.window.showInformationMessage(`WAP: predicted/measured step ${r.predictedStepMs.toFixed(1)} / ${r.measuredStepMs.toFixed(1)} ms = ${r.ratio.toFixed(2)} on ${r.devicesDescription}`);
    }),
  );

  // Revive plan panels after a window reload; the serializer must be registered during activation.
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer('wap.plan', {
      deserializeWebviewPanel: async (panel, state) => (await getPanels()).deserializeWebviewPanel(panel, state as never),
    }),
  );
}
