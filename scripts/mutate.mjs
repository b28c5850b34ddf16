// Mutation benchmark: plants one small bug at a time (an operator or a constant) in
// src/planner/cost, src/core/catalogue and src/configs, runs the tests that cover
// those rooms, and prints how many mutants a test killed. A benchmark, not part of
// `npm test`: each mutant costs one test run.
//
// Usage: node scripts/mutate.mjs [--sample N] [--seed S] [--timeout SEC] [--files substr,…] [--tests substr,…]
//
// The work happens on a temp copy of the repository (src/ and test/ copied, node_modules
// linked), so the working tree is never modified: a crash or Ctrl-C cannot leave a bug behind.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sample = Number(flag('sample', '40'));
let seed = Number(flag('seed', '1'));
const timeoutS = Number(flag('timeout', '240'));
const fileFilter = flag('files', '')?.split(',').filter(Boolean) ?? [];

const ROOMS = ['src/planner/cost', 'src/core/catalogue', 'src/configs'];
/** The tests that cover each mutated room (scripts/test.mjs substrings); --tests overrides for all. */
const ROOM_TESTS = {
  'src/planner/cost': ['test/planner', 'test/core'],
  'src/core/catalogue': ['test/core', 'test/planner/costBehaviour', 'test/planner/examples'],
  'src/configs': ['test/configs'],
};
const testOverride = flag('tests', '')?.split(',').filter(Boolean) ?? [];
const testsFor = (file) => (testOverride.length ? testOverride : ROOM_TESTS[ROOMS.find((r) => file.startsWith(r))]);
const TESTS = testOverride.length ? testOverride : [...new Set(Object.values(ROOM_TESTS).flat())];

/** Operator and constant mutations, each a regex over one line and its replacement. */
const OPERATORS = [
  [/ \* 2\b/, ' * 1', '×2 → ×1'],
  [/\b2 \* /, '1 * ', '2× → 1×'],
  [/ \+ /, ' - ', '+ → −'],
  [/ - (?!>)/, ' + ', '− → +'],
  [/ \/ /, ' * ', '÷ → ×'],
  [/ <= /, ' < ', '≤ → <'],
  [/ >= /, ' > ', '≥ → >'],
  [/ < (?!\/)/, ' <= ', '< → ≤'],
  [/ > (?!=)/, ' >= ', '> → ≥'],
  [/ === /, ' !== ', '=== → !=='],
  [/ && /, ' || ', '&& → ||'],
  [/\b(0\.\d+)\b/, (m) => String(Number(m) * 2), 'constant ×2'],
  [/(?<![.\d])\b([2-9]|[1-9]\d+)\b(?![.\d\]'"`])/, (m) => String(Number(m) + 1), 'integer +1'],
  [/\breturn true\b/, 'return false', 'true → false'],
  [/\bMath\.max\(/, 'Math.min(', 'max → min'],
  [/\bMath\.min\(/, 'Math.max(', 'min → max'],
];

function rng() {
  // mulberry32: a reproducible sample for a given --seed.
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Lines that are code: no comments, imports, types or string-only lines. */
function candidateLines(text) {
  const lines = text.split('\n');
  const out = [];
  let inBlock = false;
  lines.forEach((line, i) => {
    const t = line.trim();
    if (t.startsWith('/*')) inBlock = true;
    if (inBlock) {
      if (t.includes('*/')) inBlock = false;
      return;
    }
    if (!t || t.startsWith('//') || t.startsWith('*') || t.startsWith('import ') || t.startsWith('export type') || t.startsWith('export interface') || /^\w+\??: /.test(t)) return;
    out.push(i);
  });
  return out;
}

const mutants = [];
for (const room of ROOMS) {
  for (const file of sourceFiles(join(root, room))) {
    const rel = relative(root, file);
    if (fileFilter.length && !fileFilter.some((f) => rel.includes(f))) continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const i of candidateLines(lines.join('\n'))) {
      const code = lines[i].replace(/\/\/.*$/, '');
      for (const [re, to, what] of OPERATORS) {
        const m = re.exec(code);
        if (!m) continue;
        const replaced = typeof to === 'function' ? to(m[1] ?? m[0]) : to;
        const start = m.index + (typeof to === 'function' && m[1] ? m[0].indexOf(m[1]) : 0);
        const len = typeof to === 'function' && m[1] ? m[1].length : m[0].length;
        const mutated = lines[i].slice(0, start) + replaced + lines[i].slice(start + len);
        if (mutated !== lines[i]) mutants.push({ file: rel, line: i, original: lines[i], mutated, what });
      }
    }
  }
}

// A reproducible sample spread over all candidates (Fisher–Yates on a seeded RNG).
for (let i = mutants.length - 1; i > 0; i--) {
  const j = Math.floor(rng() * (i + 1));
  [mutants[i], mutants[j]] = [mutants[j], mutants[i]];
}
const chosen = mutants.slice(0, Math.min(sample, mutants.length));

const work = mkdtempSync(join(tmpdir(), 'wap-mutate-'));
const cleanup = () => rmSync(work, { recursive: true, force: true });
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
for (const entry of ['src', 'test', 'examples', 'scripts', 'webview', 'media', 'package.json', 'tsconfig.json']) {
  if (existsSync(join(root, entry))) cpSync(join(root, entry), join(work, entry), { recursive: true });
}
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
if (existsSync(join(root, 'dist'))) cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });

function runTests(tests = TESTS) {
  const r = spawnSync(process.execPath, [join(work, 'scripts', 'test.mjs'), ...tests], { cwd: work, timeout: timeoutS * 1000, encoding: 'utf8', killSignal: 'SIGKILL' });
  if (r.error?.code === 'ETIMEDOUT' || r.signal) return 'timeout';
  return r.status === 0 ? 'pass' : 'fail';
}

console.log(`mutation benchmark: ${chosen.length} of ${mutants.length} candidate mutants (seed ${flag('seed', '1')}), tests: ${TESTS.join(' ')}`);
const baseline = chosen.length ? runTests([...new Set(chosen.flatMap((m) => testsFor(m.file)))]) : 'pass';
if (baseline !== 'pass') {
  console.error(`the unmutated tests do not pass (${baseline}); fix them first`);
  process.exit(1);
}
let killed = 0;
const survivors = [];
for (const [n, m] of chosen.entries()) {
  const path = join(work, m.file);
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  lines[m.line] = m.mutated;
  writeFileSync(path, lines.join('\n'));
  const outcome = runTests(testsFor(m.file));
  writeFileSync(path, text);
  const dead = outcome !== 'pass';
  if (dead) killed++;
  else survivors.push(m);
  console.log(`${String(n + 1).padStart(3)}. ${dead ? 'killed ' : 'SURVIVED'} (${outcome.padEnd(10)}) ${m.file}:${m.line + 1} ${m.what}: ${m.mutated.trim().slice(0, 100)}`);
}
const rate = chosen.length ? (100 * killed) / chosen.length : 0;
console.log(`\nkill rate: ${killed}/${chosen.length} = ${rate.toFixed(1)} %`);
if (survivors.length) {
  console.log('survivors (each is a missing test):');
  for (const s of survivors) console.log(`  ${s.file}:${s.line + 1} ${s.what}\n    - ${s.original.trim()}\n    + ${s.mutated.trim()}`);
}
