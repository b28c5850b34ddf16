/** Which model a command acts on: its arguments, the model under the cursor, or a QuickPick when several. */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ModelsRequest, type ModelRef } from '../protocol/lsp';
import { WHERE_WAP_LOOKS } from '../protocol/noModelText';

export async function pickModel(client: LanguageClient, args: unknown[]): Promise<ModelRef | undefined> {
  const [first, second] = args;
  if (typeof first === 'string' && typeof second === 'string') return { uri: first, model: second };
  const editor = vscode.window.activeTextEditor;
  const uri = typeof first === 'string' ? first : first instanceof vscode.Uri ? first.toString() : editor?.document.uri.toString();
  if (!uri) {
    void vscode.window.showInformationMessage('WAP: open a model file (PyTorch, Keras or TF.js) first.');
    return undefined;
  }
  const { models } = await client.sendRequest(ModelsRequest, { uri });
  if (models.length === 0) {
    void vscode.window.showWarningMessage(`WAP: no model found in this file. ${WHERE_WAP_LOOKS}; the file's diagnostics say what stopped it.`);
    return undefined;
  }
  if (models.length === 1) return { uri, model: models[0].name };
  if (editor && editor.document.uri.toString() === uri) {
    const line = editor.selection.active.line;
    const under = models.find((m) => line >= m.range.start.line && line <= m.range.end.line);
    if (under) return { uri, model: under.name };
  }
  const picked = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.name, description: `${m.framework} · ${m.layers} layers`, detail: m.planSummary, model: m.name })),
    { title: 'WAP: which model?', placeHolder: 'This file defines several models' },
  );
  return picked ? { uri, model: picked.model } : undefined;
}
