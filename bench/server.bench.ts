/**
 * Language server and extension latency:
 * - hover after a plan exists, on a generated 2,000-line PyTorch file
 *   (p50/p99 over 200 hovers, round trip through the real server over stdio);
 * - re-analysis after a one-character edit (didChange then an immediate hover,
 *   which flushes the pending analysis; and the server's own analysis time);
 * - extension activation: requiring dist/extension.js and calling activate()
 *   with a minimal FAKE `vscode` module injected through a Module._load hook
 *   (this bench only; VS Code's own module loading is not included).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ModelsRequest } from '../src/protocol/lsp';
import { ROOT, TestServer } from '../test/server/harness';

const HOVERS = 200;
const EDITS = 20;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
const r2 = (x: number) => Math.round(x * 100) / 100;

/** ~2,000 lines: a 400-layer Sequential model plus helpers and comments, as long files really look. */
function bigFile(): { text: string; layerLines: number[] } {
  const lines = ['import torch', 'import torch.nn as nn', '', ''];
  for (let i = 0; i < 120; i++) lines.push(`def helper_${i}(x):`, `    """Helper ${i}: unrelated to the model."""`, `    y = x * ${i}`, `    return y + 1`, '', '');
  lines.push('class Big(nn.Module):', '    def __init__(self):', '        super().__init__()', '        self.body = nn.Sequential(');
  const layerLines: number[] = [];
  for (let i = 0; i < 200; i++) {
    layerLines.push(lines.length);
    lines.push(`            nn.Linear(${i % 2 ? 2048 : 1024}, ${i % 2 ? 1024 : 2048}),  # layer ${i}`);
    lines.push('            nn.ReLU(),');
  }
  lines.push('        )', '', '    def forward(self, x):', '        return self.body(x)', '');
  while (lines.length < 2000) lines.push(`# padding comment ${lines.length}`);
  return { text: lines.join('\n'), layerLines };
}

async function serverBench(): Promise<Array<Record<string, string | number>>> {
  const dir = mkdtempSync(join(tmpdir(), 'wap-server-bench-'));
  const file = join(dir, 'big.py');
  const { text, layerLines } = bigFile();
  writeFileSync(file, text);
  const server = await TestServer.start({ settings: { cluster: 'pcie4', batchSize: 128 } });
  try {
    const uri = await server.open(file, text, 'python');
    await server.planned(uri, 300_000);
    const hoverMs: number[] = [];
    let withStrategy = 0;
    for (let i = 0; i < HOVERS; i++) {
      const line = layerLines[(i * 37) % layerLines.length];
      const t = performance.now();
      const h = await server.hoverText(uri, line, 16);
      hoverMs.push(performance.now() - t);
      if (h.includes('**Strategy:**')) withStrategy++;
    }
    const editMs: number[] = [];
    const analysisMs: number[] = [];
    let current = text;
    for (let i = 0; i < EDITS; i++) {
      // One character in a comment: the model is unchanged, so the plan stays valid.
      const at = current.indexOf('# padding comment') + 2;
      current = current.slice(0, at) + (i % 2 ? 'p' : 'P') + current.slice(at + 1);
      const t = performance.now();
      await server.change(uri, current);
      await server.hoverText(uri, layerLines[i], 16);
      editMs.push(performance.now() - t);
      const models = await server.conn.sendRequest(ModelsRequest, { uri });
      analysisMs.push(models.analysisMs ?? NaN);
    }
    return [
      { measure: `hover after plan, ${text.split('\n').length}-line file (p50)`, ms: r2(quantile(hoverMs, 0.5)), target: '—', note: `${withStrategy}/${HOVERS} hovers showed a strategy` },
      { measure: 'hover after plan (p99)', ms: r2(quantile(hoverMs, 0.99)), target: '≤ 15', note: `over ${HOVERS} hovers` },
      { measure: 'one-character edit → hover answered (median)', ms: r2(quantile(editMs, 0.5)), target: '—', note: 'didChange + flush + hover round trip' },
      { measure: 're-analysis after a one-character edit (server, median)', ms: r2(quantile(analysisMs, 0.5)), target: '≤ 30', note: `max ${r2(Math.max(...analysisMs))} ms over ${EDITS} edits` },
    ];
  } finally {
    await server.stop();
  }
}

/**
 * Runs in a plain `node` child (no tsx loader, which would transform the
 * bundle and inflate the time): installs a fake `vscode` through a
 * Module._load hook, then times require + activate.
 */
const ACTIVATION_PROBE = `
const Module = require('module');
const { performance } = require('perf_hooks');
const handler = {
  get(_t, prop) {
    if (prop === 'then') return undefined;
    if (prop === Symbol.toPrimitive) return () => '';
    if (prop === 'isTrusted') return true;
    return fake;
  },
  set: () => true,
  apply: () => fake,
  construct: () => fake,
};
const fake = new Proxy(function () {}, handler);
const names = ['window', 'workspace', 'commands', 'languages', 'env', 'extensions', 'Uri', 'StatusBarAlignment', 'ThemeColor', 'MarkdownString', 'ProgressLocation', 'ViewColumn', 'ConfigurationTarget', 'Range', 'Position', 'Disposable', 'EventEmitter', 'CancellationTokenSource'];
const vscode = Object.fromEntries(names.map((n) => [n, fake]));
const original = Module._load;
Module._load = function (request, parent, isMain) { return request === 'vscode' ? vscode : original.call(this, request, parent, isMain); };
const t0 = performance.now();
const ext = require(process.argv[1]);
const t1 = performance.now();
ext.activate({ subscriptions: [], asAbsolutePath: (p) => p, extensionUri: fake, globalStorageUri: fake });
const t2 = performance.now();
process.stdout.write(JSON.stringify({ require: t1 - t0, activate: t2 - t1 }));
process.exit(0);
`;

function activationBench(): Array<Record<string, string | number>> {
  const runs: Array<{ require: number; activate: number }> = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync(process.execPath, ['-e', ACTIVATION_PROBE, join(ROOT, 'dist/extension.js')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`activation probe failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout) as { require: number; activate: number });
  }
  const med = (f: (x: { require: number; activate: number }) => number) => r2(quantile(runs.map(f), 0.5));
  return [
    { measure: 'extension: require dist/extension.js (median of 5)', ms: med((x) => x.require), target: '—', note: 'FAKE vscode module via a Module._load hook (bench only)' },
    { measure: 'extension activation: require + activate (median of 5)', ms: med((x) => x.require + x.activate), target: '≤ 150', note: 'the language client loads after activate returns' },
  ];
}

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  const rows = [...activationBench(), ...(await serverBench())];
  return [{ title: 'Language server and extension latency', rows }];
}
