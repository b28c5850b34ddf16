/**
 * Plan panel host: one webview panel per model, created or revealed, revived
 * after a reload by a serializer, disposed with its editor. The HTML comes from
 * renderWebviewHtml with a fresh nonce; plan data travels only by postMessage.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { renderWebviewHtml } from '../protocol/webviewHtml';
import { ApplyPlanToConfigsRequest, ClientCommands, PlanRequest, type ModelRef, type PlanResult } from '../protocol/lsp';
import { PLAN_VIEW_TYPE, type FromWebviewMessage, type PlanControls, type ToWebviewMessage, type WebviewPersistedState } from '../protocol/webview';
import { isCancellation } from './progress';

class PlanPanel {
  private last: ToWebviewMessage | undefined;
  private ready = false;
  /** Listeners on the panel, disposed with it. */
  readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    readonly ref: ModelRef,
    private readonly host: PlanPanels,
  ) {
    this.disposables.push(panel.webview.onDidReceiveMessage((m: FromWebviewMessage) => void this.onMessage(m).catch((err: unknown) => this.fail(err))));
  }

  show(result: PlanResult): void {
    if (this.ref.model !== result.model) this.host.rekey(this, result.model);
    this.ref.model = result.model;
    this.panel.title = `WAP plan: ${result.model}`;
    this.post({ type: 'plan', outcome: result.outcome, controls: result.controls, maxGpus: result.maxGpus, modelUri: this.ref.uri });
  }

  post(message: ToWebviewMessage): void {
    if (message.type === 'plan') this.last = message;
    if (this.ready) void this.panel.webview.postMessage(message);
  }

  private fail(err: unknown): void {
    if (isCancellation(err)) return;
    const message = err instanceof Error ? err.message : String(err);
    this.host.output.appendLine(`WAP panel: ${message}`);
    this.post({ type: 'error', message });
  }

  private async onMessage(m: FromWebviewMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (this.last) void this.panel.webview.postMessage(this.last);
        else await this.replan(undefined, true);
        return;
      case 'reveal': {
        // Layers defined in an imported module (train.py → model.py) open that file.
        const doc = await vscode.workspace.openTextDocument(m.file ? vscode.Uri.file(m.file) : vscode.Uri.parse(this.ref.uri));
        const line = Math.max(0, m.line - 1);
        const range = new vscode.Range(line, 0, line, 0);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: range, preserveFocus: false });
        return;
      }
      case 'replan':
        await this.replan(m.controls, false);
        return;
      case 'exportTrace':
        await vscode.commands.executeCommand(ClientCommands.exportTimeline, this.ref.uri, this.ref.model);
        return;
      case 'applyToConfig':
        await this.applyToConfig();
        return;
    }
  }

  /** Re-plans with the controls the server keeps for this model (settings or cluster changed). */
  refresh(reason: string): void {
    void this.replan(undefined, false, `Re-planning: ${reason}…`).catch((err: unknown) => this.fail(err));
  }

  async replan(controls: PlanControls | undefined, reuse: boolean, busyMessage = 'Planning…'): Promise<void> {
    const client = await this.host.client();
    if (!client) return;
    this.post({ type: 'busy', message: busyMessage });
    const result = await client.sendRequest(PlanRequest, { uri: this.ref.uri, model: this.ref.model, controls, reuse });
    this.show(result);
  }

  private async applyToConfig(): Promise<void> {
    const client = await this.host.client();
    if (!client) return;
    const result = await client.sendRequest(ApplyPlanToConfigsRequest, this.ref);
    if (result.changed.length > 0) {
      const edit = await client.protocol2CodeConverter.asWorkspaceEdit(result.edit);
      const ok = await vscode.workspace.applyEdit(edit);
      const names = result.changed.map((u) => vscode.workspace.asRelativePath(vscode.Uri.parse(u))).join(', ');
      void vscode.window.showInformationMessage(ok ? `WAP: applied the plan to ${names}.` : `WAP: could not edit ${names}.`);
      return;
    }
    // No open config disagrees: offer the plan as a config file instead.
    const note = result.unfixed.length ? ` (${result.unfixed.length} finding(s) need a manual change: ${result.unfixed.join('; ')})` : '';
    void vscode.window.showInformationMessage(`WAP: no open training config to update${note}. Export the plan as a config instead?`, 'Export plan as…').then((c) => {
      if (c) void vscode.commands.executeCommand(ClientCommands.exportPlan, this.ref.uri, this.ref.model);
    });
  }
}

export class PlanPanels implements vscode.WebviewPanelSerializer<WebviewPersistedState> {
  private readonly panels = new Map<string, PlanPanel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    readonly output: vscode.OutputChannel,
    readonly client: () => Promise<LanguageClient | undefined>,
  ) {}

  /** One key for a model's panel, however it was opened: the document URI and the model name ('' until the name is known). */
  private static key(ref: ModelRef): string {
    return `${ref.uri}#${ref.model ?? ''}`;
  }

  /** The panel learnt its model's name (a panel restored without one): file it under the key createOrShow looks up. */
  rekey(panel: PlanPanel, model: string): void {
    const from = PlanPanels.key(panel.ref);
    if (this.panels.get(from) === panel) this.panels.delete(from);
    const to = PlanPanels.key({ uri: panel.ref.uri, model });
    const other = this.panels.get(to);
    if (other && other !== panel) other.panel.dispose();
    this.panels.set(to, panel);
  }

  /** Reveals the model's panel (creating it when needed) and shows the plan. */
  createOrShow(ref: ModelRef, result: PlanResult): void {
    const key = PlanPanels.key({ uri: ref.uri, model: result.model });
    // A panel restored before its model's name was known sits under the nameless key of the same document.
    let panel = this.panels.get(key) ?? this.panels.get(PlanPanels.key({ uri: ref.uri }));
    if (panel) {
      panel.panel.reveal(undefined, true);
    } else {
      const webviewPanel = vscode.window.createWebviewPanel(PLAN_VIEW_TYPE, `WAP plan: ${result.model}`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, this.options());
      panel = this.adopt(webviewPanel, { uri: ref.uri, model: result.model });
    }
    panel.show(result);
  }

  /** After a reload: the webview's persisted state names the model; the plan is fetched again. */
  async deserializeWebviewPanel(webviewPanel: vscode.WebviewPanel, state: WebviewPersistedState | undefined): Promise<void> {
    if (!state?.modelUri) {
      webviewPanel.dispose();
      return;
    }
    webviewPanel.webview.options = this.options();
    this.adopt(webviewPanel, { uri: state.modelUri, model: state.model || undefined });
  }

  private adopt(webviewPanel: vscode.WebviewPanel, ref: ModelRef): PlanPanel {
    const panel = new PlanPanel(webviewPanel, ref, this);
    const existing = this.panels.get(PlanPanels.key(ref));
    // A second panel for one model (e.g. restored twice): the newest replaces it, so there are never two.
    if (existing) existing.panel.dispose();
    this.panels.set(PlanPanels.key(ref), panel);
    panel.disposables.push(
      webviewPanel.onDidDispose(() => {
        // The key at dispose time: the panel may have been re-keyed since it was adopted.
        const key = PlanPanels.key(panel.ref);
        if (this.panels.get(key) === panel) this.panels.delete(key);
        for (const d of panel.disposables.splice(0)) d.dispose();
      }),
    );
    webviewPanel.webview.html = this.html(webviewPanel.webview);
    return panel;
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')] };
  }

  private html(webview: vscode.Webview): string {
    const media = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', file)).toString();
    return renderWebviewHtml({ scriptUri: media('webview.js'), styleUri: media('webview.css'), cspSource: webview.cspSource, nonce: randomBytes(16).toString('base64') });
  }

  /** Every open view shows a plan computed with the old settings: re-plan them all. */
  refreshAll(reason: string): void {
    for (const p of new Set(this.panels.values())) p.refresh(reason);
  }

  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
    this.panels.clear();
  }
}
