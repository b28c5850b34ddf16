/**
 * "Which model does this config train?" when neither a launch script nor
 * `wap.model` says: ask with a quick pick, remember the answer per config in
 * workspaceState (keyed by the config's path, so it survives reloads and
 * stays with this workspace), and tell the server with `wap/setConfigModels`.
 * The server's quick fix on the config runs `wap.chooseConfigModel` [configUri].
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { SetConfigModelsNotification } from '../protocol/lsp';

const STATE_KEY = 'wap.configModels';
/** Files a model is defined in; a cheap text test keeps the list to files worth offering. */
const SOURCE_GLOB = '**/*.{py,ts,js,mjs}';
const EXCLUDE_GLOB = '**/{node_modules,.git,.venv,venv,site-packages,__pycache__,dist,build}/**';
const MODEL_HINT = /nn\.Module|nn\.Sequential|keras|tf\.(sequential|model|layers)|from_pretrained|AutoModel|flax\.linen/;
const MAX_FILES = 400;

/** config fsPath → model fsPath, as stored. */
function stored(context: vscode.ExtensionContext): Record<string, string> {
  const raw = context.workspaceState.get<Record<string, string>>(STATE_KEY);
  return raw && typeof raw === 'object' ? raw : {};
}

/** The stored choices as the server wants them: config URI → model URI. */
export function configModelsForServer(context: vscode.ExtensionContext): Record<string, string> {
  return Object.fromEntries(Object.entries(stored(context)).map(([config, model]) => [vscode.Uri.file(config).toString(), vscode.Uri.file(model).toString()]));
}

interface Pick extends vscode.QuickPickItem {
  action: 'file' | 'browse' | 'forget';
  uri?: vscode.Uri;
}

/** Asks which model file `configUri` trains; remembers the answer and tells the server. */
export async function chooseConfigModel(context: vscode.ExtensionContext, client: LanguageClient, configUri: unknown): Promise<void> {
  const config = typeof configUri === 'string' ? vscode.Uri.parse(configUri) : vscode.window.activeTextEditor?.document.uri;
  if (!config || config.scheme !== 'file') return;
  const current = stored(context)[config.fsPath];
  const candidates = await modelFiles(config);
  const items: Pick[] = candidates.map((uri) => ({
    label: `$(file-code) ${uri.path.replace(/^.*\//, '')}`,
    description: `${vscode.workspace.asRelativePath(uri)}${uri.fsPath === current ? ' · current' : ''}`,
    action: 'file',
    uri,
  }));
  items.push({ label: '$(folder-opened) Browse…', description: 'another file', action: 'browse' });
  if (current) items.push({ label: '$(close) Forget the choice', description: 'ask again next time', action: 'forget' });
  const picked = await vscode.window.showQuickPick(items, {
    title: `WAP: which model does ${config.path.replace(/^.*\//, '')} train?`,
    placeHolder: 'WAP compares this config with the plan of the model you pick (remembered for this config)',
    matchOnDescription: true,
  });
  if (!picked) return;
  let model = picked.uri;
  if (picked.action === 'browse') {
    const chosen = await vscode.window.showOpenDialog({ title: 'WAP: the model file this config trains', canSelectMany: false, defaultUri: vscode.Uri.joinPath(config, '..'), filters: { 'Model source': ['py', 'ts', 'js', 'mjs', 'json'] } });
    model = chosen?.[0];
    if (!model) return;
  }
  const next = { ...stored(context) };
  if (picked.action === 'forget') delete next[config.fsPath];
  else next[config.fsPath] = model!.fsPath;
  await context.workspaceState.update(STATE_KEY, next);
  await client.sendNotification(SetConfigModelsNotification, { models: configModelsForServer(context) });
  void vscode.window.showInformationMessage(
    picked.action === 'forget'
      ? `WAP: forgot the model of ${vscode.workspace.asRelativePath(config)}.`
      : `WAP: ${vscode.workspace.asRelativePath(config)} is now checked against ${vscode.workspace.asRelativePath(model!)}.`,
  );
}

/** Workspace files that look like they define a model, the config's own folder (then nearest) first. */
async function modelFiles(config: vscode.Uri): Promise<vscode.Uri[]> {
  const files = await vscode.workspace.findFiles(SOURCE_GLOB, EXCLUDE_GLOB, MAX_FILES);
  const decoder = new TextDecoder();
  const withModels: vscode.Uri[] = [];
  for (const uri of files) {
    try {
      if (MODEL_HINT.test(decoder.decode(await vscode.workspace.fs.readFile(uri)))) withModels.push(uri);
    } catch {
      // unreadable: not offered
    }
  }
  const dir = config.path.replace(/\/[^/]*$/, '');
  const distance = (u: vscode.Uri) => (u.path.startsWith(`${dir}/`) ? u.path.slice(dir.length + 1).split('/').length : 100 + u.path.split('/').length);
  return withModels.sort((a, b) => distance(a) - distance(b) || a.path.localeCompare(b.path));
}
