// One esbuild script, separate entries: extension, server, cli, trial worker (node) and webview (browser IIFE).
// Entries whose source does not exist yet are skipped, so each room can land on its own.
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const production = process.argv.includes('--production');
const root = new URL('..', import.meta.url).pathname;
const at = (p) => join(root, p);

const nodeEntries = [
  { in: 'src/extension/main.ts', out: 'dist/extension.js', external: ['vscode'] },
  { in: 'src/server/main.ts', out: 'dist/server.js' },
  { in: 'src/cli/main.ts', out: 'dist/cli.js', banner: '#!/usr/bin/env node' },
  { in: 'src/profiler/worker/trialWorker.ts', out: 'dist/trialWorker.js' },
];
const browserEntries = [{ in: 'webview/main.ts', out: 'media/webview.js' }];

// Optional native backends are loaded at run time when installed, never bundled.
const nodeExternal = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'];

const common = { bundle: true, sourcemap: production ? false : 'linked', minify: production, logLevel: 'warning', legalComments: 'none' };

const jobs = [];
for (const e of nodeEntries) {
  if (!existsSync(at(e.in))) continue;
  jobs.push(build({
    ...common,
    entryPoints: [at(e.in)],
    outfile: at(e.out),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: [...nodeExternal, ...(e.external ?? [])],
    // jsonc-parser's UMD entry requires './impl/*' at run time, which a bundle cannot resolve; its ESM build bundles cleanly.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    // ESM-only dependencies (web-tree-sitter) read import.meta.url, which esbuild leaves empty in CJS output.
    define: { 'import.meta.url': '__wapImportMetaUrl' },
    banner: { js: `${e.banner ? `${e.banner}\n` : ''}var __wapImportMetaUrl = require('url').pathToFileURL(__filename).href;` },
  }));
}
for (const e of browserEntries) {
  if (!existsSync(at(e.in))) continue;
  jobs.push(build({ ...common, entryPoints: [at(e.in)], outfile: at(e.out), platform: 'browser', format: 'iife', target: 'es2022' }));
}
await Promise.all(jobs);

// Wasm files ship beside the bundles: parsers and the wasm profiler backend load them offline.
mkdirSync(at('dist'), { recursive: true });
const assets = [
  ['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'dist/web-tree-sitter.wasm'],
  ['node_modules/tree-sitter-python/tree-sitter-python.wasm', 'dist/tree-sitter-python.wasm'],
];
const tfWasmDir = 'node_modules/@tensorflow/tfjs-backend-wasm/dist';
if (existsSync(at(tfWasmDir))) {
  for (const f of readdirSync(at(tfWasmDir))) if (f.endsWith('.wasm')) assets.push([`${tfWasmDir}/${f}`, `dist/${f}`]);
}
// The torch scripts sit side by side in dist/ as in src/: validate_dp.py imports torch_worker.py's layer builders, which import torch_modules.py.
for (const py of ['torch_worker.py', 'torch_modules.py', 'validate_dp.py']) if (existsSync(at(`src/profiler/torch/${py}`))) assets.push([`src/profiler/torch/${py}`, `dist/${py}`]);
for (const [from, to] of assets) {
  mkdirSync(dirname(at(to)), { recursive: true });
  copyFileSync(at(from), at(to));
}
