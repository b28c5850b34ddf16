/**
 * Drives the REAL built language server (node dist/server.js --stdio) over
 * JSON-RPC with vscode-languageserver-protocol: no mock server. The harness
 * plays the client side: answers workspace/configuration with the given
 * settings, records diagnostics, status notifications and applied edits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ApplyWorkspaceEditRequest,
  CodeLensRefreshRequest,
  ConfigurationRequest,
  createProtocolConnection,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  WorkDoneProgress,
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  HoverRequest,
  CodeLensRequest,
  ShutdownRequest,
  ExitNotification,
  type Diagnostic,
  type InitializeResult,
  type ProtocolConnection,
  type WorkspaceEdit,
  type CodeLens,
} from 'vscode-languageserver-protocol/node';
import { StatusNotification, type StatusParams } from '../../src/protocol/lsp';

export const ROOT = new URL('../..', import.meta.url).pathname;
/** WAP_TEST_SERVER points the tests at another server bundle (e.g. an older build, to see a test fail). */
export const SERVER = process.env.WAP_TEST_SERVER ?? join(ROOT, 'dist/server.js');
const BUILD_LOCK = '/tmp/wap-build-server.lock';

let serverPath: string | undefined;
/**
 * Builds dist/ once per test process and returns the server bundle to spawn: a private copy of dist/,
 * taken under the build lock. Test files run in parallel and each rebuilds dist/ in place, so a server
 * spawned from dist/ itself could read a half-written server.js and die before answering initialize.
 */
export function buildOnce(): string {
  if (serverPath) return serverPath;
  if (process.env.WAP_TEST_SERVER) return (serverPath = SERVER);
  if (!process.env.WAP_SKIP_BUILD) {
    const r = spawnSync('flock', [BUILD_LOCK, process.execPath, 'scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build failed: ${r.stderr || r.stdout}`);
  }
  const copy = mkdtempSync(join(tmpdir(), 'wap-test-dist-'));
  const c = spawnSync('flock', [BUILD_LOCK, 'cp', '-R', `${join(ROOT, 'dist')}/.`, copy], { encoding: 'utf8' });
  if (c.status !== 0) throw new Error(`copying dist/ failed: ${c.stderr}`);
  process.on('exit', () => rmSync(copy, { recursive: true, force: true }));
  return (serverPath = join(copy, 'server.js'));
}

export interface ServerOptions {
  trusted?: boolean;
  settings?: Record<string, unknown>;
  /** Per-document settings (scopeUri → settings), over `settings`. */
  settingsFor?: (uri: string | undefined) => Record<string, unknown> | undefined;
  root?: string;
  /** Profiler cache folder (a fresh one keeps trials from being served from an earlier run's cache). */
  cacheDir?: string;
  /** Answer as the VS Code extension does (CodeLenses and quick fixes run client commands). */
  clientCommands?: boolean;
  /** Environment of the server process over this one's (e.g. a PATH holding stand-in nvidia-smi/python3). */
  env?: Record<string, string>;
}

export class TestServer {
  readonly diagnostics = new Map<string, Diagnostic[]>();
  readonly statuses: StatusParams[] = [];
  readonly logs: string[] = [];
  readonly appliedEdits: WorkspaceEdit[] = [];
  /** How many times diagnostics were published per URI (to see debouncing). */
  readonly publishCount = new Map<string, number>();
  /** Work-done progress tokens the server created, and the kinds ('begin', 'report', 'end') sent on each. */
  readonly progress = new Map<string, string[]>();
  settings: Record<string, unknown>;
  init!: InitializeResult;
  private waiters: Array<() => void> = [];
  private versions = new Map<string, number>();
  /** Set when the server process ends: a request in flight then never settles, so `until` fails with this instead. */
  exit?: string;
  private exited!: Promise<never>;

  private constructor(
    readonly child: ChildProcess,
    readonly conn: ProtocolConnection,
    settings: Record<string, unknown>,
  ) {
    this.settings = settings;
  }

  static async start(options: ServerOptions = {}): Promise<TestServer> {
    const child = spawn(process.execPath, [buildOnce(), '--stdio'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const server = new TestServer(child, conn, options.settings ?? {});
    child.stderr!.on('data', (d: Buffer) => server.logs.push(d.toString()));
    server.exited = new Promise<never>((_, reject) => {
      child.on('exit', (code, signal) => {
        server.exit = signal ? `killed by ${signal}` : `exited with code ${code}`;
        reject(new Error(`the server process ${server.exit}\nserver log:\n${server.logs.slice(-20).join('\n')}`));
        server.wake();
      });
    });
    // Only `until` awaits it; a server stopped on purpose must not be an unhandled rejection.
    server.exited.catch(() => undefined);
    conn.onRequest(ConfigurationRequest.type, (p) =>
      p.items.map((item) => (item.section === 'wap' ? (options.settingsFor?.(item.scopeUri) ?? server.settings) : null)),
    );
    // Per-token progress handlers: a catch-all '$/progress' handler would replace the ones tests register with onProgress.
    conn.onRequest(WorkDoneProgressCreateRequest.type, (p) => {
      const kinds: string[] = [];
      server.progress.set(String(p.token), kinds);
      conn.onProgress(WorkDoneProgress.type, p.token, (v) => {
        kinds.push(v.kind);
        server.wake();
      });
      return null;
    });
    conn.onRequest(CodeLensRefreshRequest.type, () => null);
    conn.onRequest(ApplyWorkspaceEditRequest.type, (p) => {
      server.appliedEdits.push(p.edit);
      return { applied: true };
    });
    conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      server.diagnostics.set(p.uri, p.diagnostics);
      server.publishCount.set(p.uri, (server.publishCount.get(p.uri) ?? 0) + 1);
      server.wake();
    });
    conn.onNotification(StatusNotification, (s) => {
      server.statuses.push(s);
      server.wake();
    });
    conn.onNotification(LogMessageNotification.type, (m) => server.logs.push(m.message));
    conn.listen();
    const root = options.root ?? ROOT;
    server.init = await Promise.race([server.exited, conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'root' }],
      capabilities: { workspace: { configuration: true, codeLens: { refreshSupport: true }, applyEdit: true }, window: { workDoneProgress: true } },
      initializationOptions: { trusted: options.trusted ?? false, cacheDir: options.cacheDir, clientCommands: options.clientCommands ?? false },
    })]);
    await conn.sendNotification(InitializedNotification.type, {});
    return server;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `check` holds, re-checking on every notification and every 25 ms. */
  async until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await Promise.race([check(), this.exited]);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nserver log:\n${this.logs.slice(-20).join('\n')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 25);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async open(path: string, text = readFileSync(path, 'utf8'), languageId = guessLanguage(path)): Promise<string> {
    const uri = pathToFileURL(path).href;
    this.versions.set(uri, 1);
    await this.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version: 1, text } });
    return uri;
  }

  /** Replaces the whole text (a full-document change event). */
  async change(uri: string, text: string): Promise<void> {
    const version = (this.versions.get(uri) ?? 1) + 1;
    this.versions.set(uri, version);
    await this.conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [{ text }] });
  }

  /** Closes a document the way the editor does when its tab is closed (unsaved edits discarded). */
  async close(uri: string): Promise<void> {
    await this.conn.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }

  async hoverText(uri: string, line: number, character: number): Promise<string> {
    const h = await this.conn.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line, character } });
    if (!h) return '';
    const c = h.contents as { value?: string } | string;
    return typeof c === 'string' ? c : (c.value ?? '');
  }

  codeLenses(uri: string): Promise<CodeLens[]> {
    return this.conn.sendRequest(CodeLensRequest.type, { textDocument: { uri } }).then((r) => r ?? []);
  }

  /** Waits until every model in the document has a planned CodeLens. */
  planned(uri: string, timeoutMs = 30_000): Promise<CodeLens[]> {
    return this.until('a plan for every model', async () => {
      const lenses = await this.codeLenses(uri);
      return lenses.length > 0 && lenses.every((l) => l.command && l.command.title !== 'Parallelize model') ? lenses : undefined;
    }, timeoutMs);
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.conn.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 2000))]);
      await this.conn.sendNotification(ExitNotification.type);
    } catch {
      // already gone
    }
    this.conn.dispose();
    if (this.child.exitCode === null) this.child.kill();
  }
}

function guessLanguage(path: string): string {
  if (path.endsWith('.py')) return 'python';
  if (/\.(ts|tsx)$/.test(path)) return 'typescript';
  if (/\.(js|mjs|cjs)$/.test(path)) return 'javascript';
  if (path.endsWith('.json')) return 'json';
  if (/\.ya?ml$/.test(path)) return 'yaml';
  if (path.endsWith('.sh')) return 'shellscript';
  return 'plaintext';
}

/** 0-based line of the first line containing `needle`, and the column of the needle. */
export function find(text: string, needle: string, from = 0): { line: number; character: number } {
  const lines = text.split('\n');
  for (let i = from; i < lines.length; i++) {
    const c = lines[i].indexOf(needle);
    if (c >= 0) return { line: i, character: c };
  }
  throw new Error(`'${needle}' not found`);
}
