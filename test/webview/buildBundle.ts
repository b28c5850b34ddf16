/**
 * Builds media/webview.js for the browser tests and the bench. Runs the real
 * `node scripts/build.mjs`; while another room's entry does not compile yet,
 * that script fails as a whole, so the webview entry is then built alone with
 * the same esbuild options (browser, IIFE, es2022) and the failure is logged.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

export const repoRoot = join(__dirname, '..', '..');
export const bundlePath = join(repoRoot, 'media', 'webview.js');

export async function buildWebviewBundle(options: { production?: boolean } = {}): Promise<void> {
  const args = [join(repoRoot, 'scripts', 'build.mjs'), ...(options.production ? ['--production'] : [])];
  const r = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  if (r.status === 0 && existsSync(bundlePath)) return;
  const firstError = `${r.stderr}${r.stdout}`.split('\n').find((l) => l.includes('ERROR')) ?? `exit ${r.status}`;
  console.warn(`scripts/build.mjs failed (${firstError.trim()}); building the webview entry alone`);
  await build({
    entryPoints: [join(repoRoot, 'webview', 'main.ts')],
    outfile: bundlePath,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: Boolean(options.production),
    sourcemap: options.production ? false : 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });
}
