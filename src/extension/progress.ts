/** Runs a long server request under a cancellable notification, forwarding the server's work-done progress. */
import * as vscode from 'vscode';
import { WorkDoneProgress, type LanguageClient } from 'vscode-languageclient/node';

export function withServerProgress<R>(
  client: LanguageClient,
  title: string,
  run: (token: vscode.CancellationToken, workDoneToken: string) => Promise<R>,
): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    const workDoneToken = `wap-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    let last = 0;
    const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
      if (value.kind === 'end') return;
      const pct = value.percentage;
      const increment = pct !== undefined ? Math.max(0, pct - last) : undefined;
      if (pct !== undefined) last = Math.max(last, pct);
      progress.report({ message: value.message, increment });
    });
    try {
      return await run(token, workDoneToken);
    } finally {
      sub.dispose();
    }
  });
}

/** Cancellation is not a failure worth a popup. */
export function isCancellation(err: unknown): boolean {
  const e = err as { code?: number; name?: string; message?: string };
  return e?.code === -32800 || e?.name === 'Canceled' || e?.name === 'Cancelled' || /cancell?ed/i.test(e?.message ?? '');
}
