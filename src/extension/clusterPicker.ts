/** "WAP: Select Cluster": a preset, the local GPUs, or a cluster spec file; written to `wap.cluster`. */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ClusterPresetsRequest } from '../protocol/lsp';

interface ClusterItem extends vscode.QuickPickItem {
  value: string | undefined | 'file';
}

export async function selectCluster(client: LanguageClient | undefined): Promise<void> {
  const config = vscode.workspace.getConfiguration('wap');
  const current = config.get<string>('cluster') ?? '';
  const { presets, defaultPreset } = client ? await client.sendRequest(ClusterPresetsRequest) : { presets: [], defaultPreset: undefined };
  const items: ClusterItem[] = [
    { label: '$(device-desktop) Local GPUs', description: current === '' ? '(current)' : undefined, detail: `The GPUs detected on this machine; ${defaultPreset ?? 'the default preset'} when none`, value: undefined },
    ...presets.map((p): ClusterItem => ({ label: p.id, description: `${p.gpus} GPUs${current === p.id ? ' (current)' : ''}`, detail: p.description, value: p.id })),
    { label: '$(file) From file…', detail: 'A cluster spec JSON file (see docs/clusters.md)', value: 'file' },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'WAP: cluster to plan for', matchOnDetail: true });
  if (!picked) return;
  let value = picked.value;
  if (value === 'file') {
    const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Cluster spec': ['json'] }, title: 'Cluster spec file' });
    if (!files?.[0]) return;
    value = vscode.workspace.asRelativePath(files[0], false);
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  const target = folders.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update('cluster', value, target);
  // Say where the choice went: a workspace setting lands in a file the user may commit.
  const where = folders.length ? (vscode.workspace.workspaceFile ? vscode.workspace.asRelativePath(vscode.workspace.workspaceFile) : `${folders[0].name}/.vscode/settings.json`) : 'your user settings';
  const shown = value ?? 'the local GPUs';
  void vscode.window.showInformationMessage(`WAP: plans now use ${shown} (wap.cluster saved in ${where}); open plan views re-plan.`, 'Open settings').then((choice) => {
    if (choice) void vscode.commands.executeCommand(folders.length ? 'workbench.action.openWorkspaceSettings' : 'workbench.action.openSettings', 'wap.cluster');
  });
}
