/**
 * Starts a real VS Code workbench (code-server) for the end-to-end suite.
 * Every run gets a fresh user-data dir, extensions dir, HOME and TMPDIR, since
 * state leaks between runs otherwise. code-server runs in its own process
 * group (detached) so stop() can kill it and everything it spawned.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..');

export interface CodeServer {
  url: string;
  port: number;
  root: string;
  logFile: string;
  stop(): Promise<void>;
}

export function codeServerBin(): string {
  return join(process.env.WAP_TOOLS_DIR ?? join(repoRoot, '.tools'), 'code-server', 'node_modules', '.bin', 'code-server');
}

/** Installs code-server on demand (idempotent; about 80 s the first time). */
export function ensureCodeServer(): string {
  const r = spawnSync('bash', [join(repoRoot, 'scripts', 'e2e', 'install-code-server.sh')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('code-server install failed; see the output above');
  return codeServerBin();
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function healthy(url: string): Promise<boolean> {
  return new Promise((ok) => {
    const req = get(`${url}/healthz`, (res) => {
      res.resume();
      ok(res.statusCode === 200);
    });
    req.on('error', () => ok(false));
    req.setTimeout(1000, () => {
      req.destroy();
      ok(false);
    });
  });
}

const workbenchSettings = {
  'workbench.startupEditor': 'none',
  'workbench.colorTheme': 'Default Dark Modern',
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'editor.hover.delay': 150,
  'editor.minimap.enabled': false,
  'files.autoSave': 'off',
  'git.enabled': false,
  'chat.disableAIFeatures': true,
  'wap.cluster': 'pcie4',
};

export async function startCodeServer(options: { vsix: string }): Promise<CodeServer> {
  const bin = codeServerBin();
  const root = mkdtempSync(join(tmpdir(), 'wap-e2e-'));
  const dirs = { userData: join(root, 'user-data'), extensions: join(root, 'extensions'), home: join(root, 'home'), tmp: join(root, 'tmp') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(join(dirs.userData, 'User', 'settings.json'), JSON.stringify(workbenchSettings, null, 2));
  const env = { ...process.env, HOME: dirs.home, TMPDIR: dirs.tmp, XDG_CONFIG_HOME: join(dirs.home, '.config') };

  const install = spawnSync(bin, ['--install-extension', options.vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData], {
    env,
    encoding: 'utf8',
  });
  if (install.status !== 0) throw new Error(`installing ${options.vsix} failed:\n${install.stdout}\n${install.stderr}`);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(root, 'code-server.log');
  const log = openSync(logFile, 'a');
  const child = spawn(
    bin,
    [
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--user-data-dir',
      dirs.userData,
      '--extensions-dir',
      dirs.extensions,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
    ],
    { env, detached: true, stdio: ['ignore', log, log] },
  );
  const pid = child.pid!;
  child.unref();
  const stop = async () => {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 30; i++) {
      try {
        process.kill(-pid, 0);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  const deadline = Date.now() + 60_000;
  while (!(await healthy(url))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`code-server did not become healthy:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, port, root, logFile, stop };
}
