/** "Export Timeline (Chrome trace)" and "Export plan as…": ask the server, then save or preview. */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { EXPORT_FORMAT_IDS, ExportPlanRequest, ExportTraceRequest, type ExportFormatId, type ModelRef } from '../protocol/lsp';

function defaultUri(ref: ModelRef, fileName: string): vscode.Uri | undefined {
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(ref.uri)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, fileName) : undefined;
}

export async function exportTimeline(client: LanguageClient, ref: ModelRef): Promise<void> {
  const { model, trace } = await client.sendRequest(ExportTraceRequest, ref);
  const target = await vscode.window.showSaveDialog({
    title: 'WAP: save the predicted timeline (open it in chrome://tracing or ui.perfetto.dev)',
    defaultUri: defaultUri(ref, `${model.replace(/[^\w.-]+/g, '_')}.trace.json`),
    filters: { 'Chrome trace': ['json'] },
  });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(JSON.stringify(trace)));
  announceSaved(target, 'timeline');
}

/** A saved file is only useful once found: offer to open it or show it in the file explorer. */
function announceSaved(target: vscode.Uri, what: string): void {
  void vscode.window.showInformationMessage(`WAP: ${what} saved to ${vscode.workspace.asRelativePath(target)}`, 'Open', 'Reveal in Explorer').then((choice) => {
    if (choice === 'Open') void vscode.commands.executeCommand('vscode.open', target);
    if (choice === 'Reveal in Explorer') void vscode.commands.executeCommand('revealInExplorer', target);
  });
}

/** How the QuickPick shows each format the configs room exports: one entry per EXPORT_FORMAT_IDS, checked by the compiler. */
const FORMAT_ITEMS: Record<ExportFormatId, { label: string; detail: string; language: string }> = {
  deepspeed: { label: 'DeepSpeed config', detail: 'ds_config.json with the plan\'s batch sizes, precision, ZeRO stage and offload', language: 'json' },
  accelerate: { label: 'HF Accelerate config', detail: 'accelerate config YAML: mixed precision, FSDP sharding and checkpointing, or its DeepSpeed plugin', language: 'yaml' },
  torchtitan: { label: 'torchtitan job config', detail: 'TOML [parallelism], [training] and [activation_checkpoint] sections: FSDP2/HSDP, TP/PP/CP, batch, precision', language: 'toml' },
  megatron: { label: 'Megatron-LM arguments', detail: 'pretrain_gpt.py launch with TP/PP/CP, sequence parallel, recompute, batch and precision', language: 'shellscript' },
  torchrun: { label: 'torchrun command line', detail: 'single- or multi-node launch', language: 'shellscript' },
  hostfile: { label: 'Multi-node hostfile and launch', detail: 'DeepSpeed hostfile, torchrun rendezvous, Horovod -H', language: 'shellscript' },
  horovod: { label: 'Horovod launch', detail: 'horovodrun -np N -H host:slots', language: 'shellscript' },
  'torch-parallelize': { label: 'PyTorch parallelize() (torch ≥ 2.4)', detail: 'DeviceMesh, ColwiseParallel/RowwiseParallel by module name, fully_shard (FSDP2), checkpointing', language: 'python' },
};
const FORMATS = EXPORT_FORMAT_IDS.map((id) => ({ id, ...FORMAT_ITEMS[id] }));

export async function exportPlanAs(client: LanguageClient, ref: ModelRef, format?: string): Promise<void> {
  const picked = FORMATS.find((f) => f.id === format) ?? (await vscode.window.showQuickPick(FORMATS, { title: 'WAP: export plan as…', matchOnDetail: true }));
  if (!picked) return;
  const result = await client.sendRequest(ExportPlanRequest, { ...ref, format: picked.id });
  // A preview first: exported configs are read before they are saved, never written blindly.
  const doc = await vscode.workspace.openTextDocument({ content: result.content, language: picked.language });
  await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  const choice = await vscode.window.showInformationMessage(`WAP: ${result.description}`, 'Save as…');
  if (choice !== 'Save as…') return;
  const target = await vscode.window.showSaveDialog({ defaultUri: defaultUri(ref, result.fileName), title: `Save ${result.fileName}` });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(result.content));
  announceSaved(target, picked.label);
}
