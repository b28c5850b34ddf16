/**
 * Extension entry (dist/extension.js). Activation stays cheap: the output
 * channel, status bar and command registrations are created here; the
 * language client (the heavy part) is loaded lazily and started without
 * blocking activation.
 */
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { StatusBar } from './statusBar';
import type { WapClient } from './client';

let client: WapClient | undefined;

export function activate(context: vscode.ExtensionContext): { ready: Promise<WapClient | undefined> } {
  const output = vscode.window.createOutputChannel('WAP');
  context.subscriptions.push(output);
  const status = new StatusBar();
  context.subscriptions.push(status);

  const ready: Promise<WapClient | undefined> = import('./client')
    .then(async ({ WapClient }) => {
      client = new WapClient(context, output, status);
      await client.start();
      return client;
    })
    .catch((err: unknown) => {
      output.appendLine(`WAP: the language server did not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      status.showError('server did not start');
      void vscode.window.showErrorMessage('WAP: the language server did not start. See the "WAP" output channel.');
      return undefined;
    });

  registerCommands(context, () => ready, output);
  // Tests and other extensions can wait for the server through the returned API.
  return { ready };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
