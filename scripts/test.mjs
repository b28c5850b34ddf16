// Runs every test/**/*.test.ts on Node's built-in runner (tsx as the loader).
// Node 20's --test takes no globs, so the files are listed here.
// Usage: node scripts/test.mjs [substring…]  — only files whose path contains one of the substrings.
//
// Two phases. Most files run two at a time. A file whose first lines carry the
// marker `wap-test: alone` runs afterwards with the machine to itself: it compares
// a prediction with a real measurement (`wap validate` timing torchrun steps), and
// on a 2-core machine a concurrent test file slows the measured steps by half,
// which is load, not a fault in what is tested. One summary closes the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(relative(root, p));
  }
})(join(root, 'test'));
const selected = filters.length ? files.filter((f) => filters.some((s) => f.includes(s))) : files;
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const ALONE_MARKER = 'wap-test: alone';
const runsAlone = (file) => readFileSync(join(root, file), 'utf8').slice(0, 2000).includes(ALONE_MARKER);
const phases = [
  { files: selected.filter((f) => !runsAlone(f)), concurrency: 2 },
  { files: selected.filter(runsAlone), concurrency: 1 },
].filter((phase) => phase.files.length > 0);

// Node picks spec on a terminal and TAP otherwise; naming a second reporter
// turns that default off, so it is restated here.
const visibleReporter = process.stdout.isTTY ? 'spec' : 'tap';
const totalsDir = mkdtempSync(join(tmpdir(), 'wap-test-'));
const totals = {};
let exitCode = 0;
phases.forEach((phase, index) => {
  const totalsFile = join(totalsDir, `phase${index}.jsonl`);
  const args = [
    '--import', 'tsx', '--test', `--test-concurrency=${phase.concurrency}`,
    `--test-reporter=${visibleReporter}`, '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts', 'test-totals-reporter.mjs')}`, `--test-reporter-destination=${totalsFile}`,
    ...phase.files,
  ];
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) exitCode = run.status ?? 1;
  let lines = [];
  try {
    lines = readFileSync(totalsFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    // A runner that died before its summary leaves no totals; its exit code already fails the run.
  }
  for (const line of lines) for (const [key, value] of Object.entries(JSON.parse(line))) totals[key] = (totals[key] ?? 0) + value;
});
rmSync(totalsDir, { recursive: true, force: true });

if (phases.length > 1) {
  const prefix = visibleReporter === 'tap' ? '#' : 'ℹ';
  console.log(`${prefix} all phases (${phases.map((p) => `${p.files.length} file(s) ×${p.concurrency}`).join(', then ')}):`);
  for (const key of ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo']) console.log(`${prefix} ${key} ${totals[key] ?? 0}`);
  console.log(`${prefix} duration_ms ${Math.round(totals.duration_ms ?? 0)}`);
}
if (exitCode === 0 && (totals.fail ?? 0) > 0) exitCode = 1;
process.exit(exitCode);
