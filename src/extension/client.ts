/**
 * The language client: starts dist/server.js over Node IPC, restarts it at
 * most MAX_RESTARTS times, forwards workspace trust and the status
 * notification. Loaded lazily by main.ts (vscode-languageclient is large).
 */
import * as vscode from 'vscode';
import { CloseAction, ErrorAction, LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { SetPythonNotification, SetTrustedNotification, StatusNotification, type WapInitializationOptions } from '../protocol/lsp';
import { configModelsForServer } from './configModels';
import { selectedPythonInterpreter, watchPythonInterpreter } from './pythonInterpreter';
import type { StatusBar } from './statusBar';

export const MAX_RESTARTS = 4;

/** Languages the server reads: model sources and training configs. */
// 'toml' is torchtitan's config language (from a TOML extension); Slurm and PBS batch files are shell scripts that
// VS Code opens as plain text, so they are selected by name.
const DOCUMENT_SELECTOR = [
  ...['python', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact', 'json', 'jsonc', 'yaml', 'toml', 'shellscript', 'makefile'].flatMap((language) => [
    { scheme: 'file', language },
    { scheme: 'untitled', language },
  ]),
  { scheme: 'file', pattern: '**/*.{toml,sbatch,slurm,pbs,job}' },
];

export class WapClient {
  readonly client: LanguageClient;
  private restarts = 0;
  /** The Python extension's selected interpreter, passed at every (re)start and on change. */
  private python: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly status: StatusBar,
  ) {
    const module = context.asAbsolutePath('dist/server.js');
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
    };
    // A function, read at every (re)start: a server restarted after trust was granted must start trusted,
    // since the one-off SetTrusted notification went to the process that died.
    const initializationOptions = (): WapInitializationOptions => ({
      trusted: vscode.workspace.isTrusted,
      clientCommands: true,
      cacheDir: vscode.Uri.joinPath(context.globalStorageUri, 'profile-cache').fsPath,
      ...(this.python ? { python: this.python } : {}),
      // The per-config model choices, so a restarted server knows them too.
      configModels: configModelsForServer(context),
    });
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: output,
      initializationOptions,
      synchronize: { configurationSection: 'wap' },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
    };
    this.client = new LanguageClient('wap', 'WAP', serverOptions, clientOptions);
  }

  async start(): Promise<void> {
    const started = Date.now();
    // The Python extension's choice, when installed; never awaited long (a missing API answers at once).
    this.python = await selectedPythonInterpreter();
    await this.client.start();
    this.output.appendLine(`WAP: language server started in ${Date.now() - started} ms`);
    this.context.subscriptions.push(
      this.client.onNotification(StatusNotification, (s) => this.status.update(s)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        void this.client.sendNotification(SetTrustedNotification, { trusted: true });
      }),
    );
    const watcher = await watchPythonInterpreter((path) => {
      this.python = path;
      void this.client.sendNotification(SetPythonNotification, { interpreter: path, source: 'python-extension' });
    });
    if (watcher) this.context.subscriptions.push(watcher);
  }

  /** Restart a crashed server a few times; then stop and tell the user rather than loop. */
  private onClosed(): { action: CloseAction; message?: string } {
    this.restarts++;
    if (this.restarts <= MAX_RESTARTS) {
      this.output.appendLine(`WAP: the language server stopped; restarting (${this.restarts}/${MAX_RESTARTS})`);
      return { action: CloseAction.Restart };
    }
    this.status.showError('server stopped');
    void vscode.window
      .showErrorMessage(`WAP: the language server stopped ${this.restarts} times and will not be restarted. See the "WAP" output channel.`, 'Show log', 'Reload window')
      .then((choice) => {
        if (choice === 'Show log') this.output.show();
        if (choice === 'Reload window') void vscode.commands.executeCommand('workbench.action.reloadWindow');
      });
    return { action: CloseAction.DoNotRestart, message: 'WAP: language server stopped too often' };
  }

  async stop(): Promise<void> {
    if (this.client.isRunning()) await this.client.stop();
  }
}
