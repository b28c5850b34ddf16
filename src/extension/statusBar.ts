/** The status bar item: detected GPUs and backend, trust, busy and errors; a click selects the cluster. */
import * as vscode from 'vscode';
import type { StatusParams } from '../protocol/lsp';
import { ClientCommands } from '../protocol/commands';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('wap.status', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'WAP';
    this.item.text = '$(loading~spin) WAP';
    this.item.tooltip = 'WAP: starting the language server…';
    this.item.command = ClientCommands.selectCluster;
    this.item.show();
  }

  update(status: StatusParams): void {
    const icon = status.busy ? '$(sync~spin) ' : status.error ? '$(warning) ' : !status.trusted ? '$(shield) ' : '';
    this.item.text = `${icon}${status.text}`;
    const tip = new vscode.MarkdownString();
    tip.appendText(status.tooltip);
    tip.appendMarkdown('\n\n_Click to select the cluster to plan for._');
    this.item.tooltip = tip;
    this.item.backgroundColor = status.error ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  showError(message: string): void {
    this.item.text = `$(error) WAP: ${message}`;
    this.item.tooltip = 'See the "WAP" output channel';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
  }

  dispose(): void {
    this.item.dispose();
  }
}
