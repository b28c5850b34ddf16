// Mutation benchmark: plants one small bug at a time (an operator or a constant) in
// src/planner/cost, src/core/catalogue and src/configs, runs the tests that cover
// the mutated file, and prints how many mutants a test killed. A benchmark, not part of
// `npm test`: each mutant costs one or more test-file runs.
//
// Usage: node scripts/mutate.mjs [--sample N|all] [--seed S] [--timeout SEC] [--files substr,…] [--tests substr,…] [--list] [--json FILE] [--trust]
//   --list  prints the candidate mutants per file and exits (no tests run); --show prints the sample itself
//   --json  writes the survivors (file, line, mutation, original, mutated) to FILE
//   --trust skips the baseline run of the unmutated tests (order by file size instead; use only right after they passed)
//
// The work happens on a temp copy of the repository (src/ and test/ copied, node_modules
// linked), so the working tree is never modified: a crash or Ctrl-C cannot leave a bug behind.
//
// Speed: a mutant runs only the test files (of its room's pool) that import the mutated
// file, directly or through other files; they run one file at a time, fastest first, and
// the first failing file kills the mutant (the rest are skipped).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sampleArg = flag('sample', '40');
const sample = sampleArg === 'all' ? Infinity : Number(sampleArg);
let seed = Number(flag('seed', '1'));
const timeoutS = Number(flag('timeout', '240'));
const fileFilter = flag('files', '')?.split(',').filter(Boolean) ?? [];
const listOnly = args.includes('--list');
const jsonOut = flag('json', '');

const ROOMS = ['src/planner/cost', 'src/core/catalogue', 'src/configs'];
/** The tests that may cover each mutated room (test-path substrings); --tests overrides for all. */
const ROOM_TESTS = {
  'src/planner/cost': ['test/planner', 'test/core'],
  'src/core/catalogue': ['test/core', 'test/planner/costBehaviour', 'test/planner/examples'],
  'src/configs': ['test/configs'],
};
const testOverride = flag('tests', '')?.split(',').filter(Boolean) ?? [];

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

/**
 * Equivalent mutants: patterns whose mutation cannot change what the program does, so no
 * test can kill them. Each entry: [file substring, regex over the ORIGINAL line, mutation
 * name (OPERATORS' third field; undefined = every mutation of the line), why].
 */
const EQUIVALENT = [
  // The word starts with '-' (checked the line above), so its '=' is never at index 0: < 0 and ≤ 0 agree.
  ['src/configs/launchScripts.ts', /const name = \(eq < 0 \? w\.raw : w\.raw\.slice\(0, eq\)\)/, '< → ≤', "w.raw[0] is '-'"],
  // Ring and tree move the same bytes (one β), and the tree's steps never exceed the ring's (⌈log2 n⌉ ≤ n − 1):
  // min(ring, tree) is the tree, so 'auto' and 'tree' price the same whichever way the test reads.
  ['src/planner/cost/collectives.ts', /return algorithm === 'tree' \? tree : Math\.min\(ring, tree\);/, '=== → !==', 'min(ring, tree) = tree'],
  // A flag starts with '-' followed by more of it: the newline searched back from f.start + 1 is the one before f.start.
  ['src/configs/megatron.ts', /const lineStart = text\.lastIndexOf\('\\n', f\.start - 1\) \+ 1;/, '− → +', 'text[f.start] and text[f.start + 1] are the flag'],
  // close is the index of the call's ')', never a newline: nl === close cannot happen.
  ['src/configs/python.ts', /if \(nl < 0 \|\| nl > close\) return/, '> → ≥', "text[close] is ')'"],
  // A value's range ends after its first character, so the newline searched from range.end is never at index 0.
  ['src/configs/comments.ts', /const own = text\.slice\(range\.end, lineEnd < 0 \? text\.length : lineEnd\);/, '< → ≤', 'range.end ≥ 1'],
  // saving = 1 − q for a double q: by Sterbenz exact, 1 − fl(0.995) = 0.00500000000000000444, and no double q gives
  // fl(0.005) itself, so ≥ and > agree on every reachable saving.
  ['src/configs/compare.ts', /if \(saving >= 0\.005\) message \+=/, '≥ → >', '0.005 is not 1 − q for any double q'],
  // checkDeviceIds returns early when the lengths are equal, so `<` and `<=` agree on every value that reaches it.
  ['src/configs/compare.ts', /const fewer = ids\.value\.length < perNode;/, '< → ≤', 'equal lengths returned above'],
  // For 100 ≤ x < 1000, toFixed(0) and toPrecision(3) print the same digits (both round half up), so the
  // threshold's exact place (≥ 100, > 100, ≥ 101) cannot show.
  ['src/configs/compare.ts', /const rate = \(x: number\): string => \(x >= 100 \?/, undefined, 'same digits either side of 100'],
  // The indentation of an exported JSON file: every JSON reader gets the same config.
  ['src/configs/', /JSON\.stringify\([^)]*, null, 2\)/, 'integer +1', 'indentation only'],
  // kind comes from distributedType (undefined without it), and a parallelism whose value is undefined is
  // read nowhere (only 'data'/'sharded' give advice): `&&` and `||` build the same findings.
  ['src/configs/accelerate.ts', /parallelism: distributedType && kind \?/, '&& → ||', 'kind implies distributedType'],
  // One step past the end reads undefined, which matches no quote or bracket: the loop ends and returns text.length either way.
  ['src/configs/shellWords.ts', /for \(let j = i \+ 1; j < text\.length; j\+\+\)/, '< → ≤', 'text[text.length] matches nothing'],
  // The newline searched for starts after a '#', so it is never at index 0: < 0 and ≤ 0 agree.
  ['src/configs/shellWords.ts', /i = nl < 0 \? text\.length : nl;/, '< → ≤', 'nl > i ≥ 0 when found'],
  // safeBytes guards NaN/undefined from unshaped layers; the catalogue never reports a negative or infinite workload,
  // the only values on which `&&` and `||` differ.
  ['src/planner/cost/modelStatic.ts', /return Number\.isFinite\(x\) && \(x as number\) > 0/, '&& → ||', 'workloads are finite and ≥ 0'],
  // Zero work costs zero by the formula too (0 bytes / bandwidth, 0 FLOPs / rate): the early return only saves time.
  ['src/planner/cost/compute.ts', /if \((paramsOnDevice|flops) <= 0\) return 0;/, '≤ → <', 'the formula gives 0 at 0'],
  // indexOf from i + 3 finds nothing before i + 3: a found close is never 0, so < 0 and ≤ 0 agree.
  ['src/configs/tomlDoc.ts', /if \(close < 0\) throw new MalformedConfig\('TOML: unterminated multi-line string'/, '< → ≤', 'a found close is ≥ i + 3'],
  // launcherEnd returns -1 or the index after the launcher word (≥ 1): 0 never comes back.
  ['src/configs/launchScripts.ts', /if \(first < 0\) continue;/, '< → ≤', 'launcherEnd is −1 or ≥ 1'],
  // The link-cost memo key's last bit only tells data from model groups apart: flipping it keeps keys distinct.
  ['src/planner/cost/tableBuilder.ts', /\(kind === 'data' \? 1 : 0\)/, '=== → !==', 'a bijection of the key'],
  // Loops reading one past the end get undefined, which matches nothing; a found newline after a value is never at 0.
  ['src/configs/tomlDoc.ts', /for \(let j = i; j < text\.length; j\+\+\)/, '< → ≤', 'text[text.length] matches nothing'],
  ['src/configs/python.ts', /if \(nl < 0 \|\| nl > close\)/, '< → ≤', 'nl > last.endIndex ≥ 0 when found'],
  // A non-hybrid plan's shard group is the whole DP × CP group: the HSDP arithmetic then writes the same shard and replicate.
  ['src/configs/torchtitan.ts', /const hsdpShards = plan\.hybridShard && plan\.shardGroup/, '&& → ||', 'non-hybrid gives shard = DP, replicate 1 either way'],
  // A model-parallel group of one rank: every collective over it costs 0 (collectiveMs returns 0 for n ≤ 1).
  ['src/planner/cost/tableBuilder.ts', /if \(c\.k > 1\) \{/, '> → ≥', 'collectives over one rank cost 0'],
  // The layer-cost memo only saves work: a key left out of it is costed again, to the same options.
  ['src/planner/cost/tableBuilder.ts', /key >= 0/, '≥ → >', 'a memo miss recomputes the same value'],
  // Layout overlaps are 0 or a multiple of 1/(d·k)² (≥ 1/n², far above EPS = 1e-12): > and ≥ EPS, ≤ and < EPS agree.
  ['src/planner/cost/layout.ts', /EPS/, '> → ≥', 'overlaps are 0 or ≫ EPS'],
  ['src/planner/cost/layout.ts', /EPS/, '≤ → <', 'overlaps are 0 or ≫ EPS'],
  // Memo keys (layout, link, shard group): key·3 + bit is as distinct as key·2 + bit, so a larger multiplier changes nothing.
  ['src/planner/cost/tableBuilder.ts', /const key = \(.*\) \* 2 \+ \(/, 'integer +1', 'a wider key is still a bijection'],
  // A group whose slowest memory equals the first GPU's gets a copy with the same value instead of the spec itself.
  ['src/planner/cost/topology.ts', /return bandwidth < s\.memoryBandwidthGBs \? \{ \.\.\.s, memoryBandwidthGBs: bandwidth \} : s;/, '< → ≤', 'an equal copy'],
  // Two Megatron flags never end at the same offset, so which of two equal ends the reduce keeps never arises.
  ['src/configs/megatron.ts', /\.reduce\(\(a, b\) => \(b\.end > a\.end \? b : a\)/, '> → ≥', 'flag ends are distinct'],
  // Every reader that states a micro-batch also states an accumulation, and both setters return edits whenever the
  // plan is given: `m` and `a` are never undefined here, so && and || agree (the guard keeps a future reader safe).
  ['src/configs/setup.ts', /if \(m && a\) \{/, '&& → ||', 'both setters always edit'],
  // Layouts on n GPUs have d·k = n, so two layouts with the same d have the same k; with k = 1 they also share the
  // (always unsharded) flag and are the same layout, which the loop skips: k ≥ 1 adds no pair.
  ['src/planner/cost/edgeCosts.ts', /if \(k > 1 && layouts\[b\]\.d === d\)/, '> → ≥', 'k = 1 leaves no other layout with its d'],
  // A YAML key's first character is never a newline, nor is the one after it (a key has a ':' or more text after it),
  // so searching back for the line start from range[0] + 1 finds the same newline as from range[0] − 1.
  ['src/configs/yamlDoc.ts', /const lineStart = text\.lastIndexOf\('\\n', keyNode\.range\[0\] - 1\) \+ 1;/, '− → +', 'no newline inside a key'],
  // A flag starts with '--': neither its first character nor the next is a newline, so searching back for the line
  // start from start + 1 finds the same newline as from start − 1.
  ['src/configs/megatron.ts', /const lineStart = text\.lastIndexOf\('\\n', start - 1\) \+ 1;/, '− → +', 'a flag holds no newline'],
  // indexOf from i + 1 finds a closing quote at ≥ i + 1 ≥ 1 or returns −1: never 0, so < 0 and ≤ 0 agree.
  ['src/configs/shellWords.ts', /return close < 0 \? text\.length : close \+ 1;/, '< → ≤', 'a found close is ≥ 1'],
  // After meanPerBatch the fit sees two or more distinct batches, so their spread sxx is > 0: ≥ 0 changes nothing.
  ['src/planner/cost/profileCosts.ts', /const slope = sxx > 0 \? Math\.max\(0, sxy \/ sxx\) : 0;/, '> → ≥', 'distinct batches have sxx > 0'],
  // Σ(y − ȳ) = 0, so Σ(x ± x̄)(y − ȳ) = Σx(y − ȳ) either way: the covariance is unchanged.
  ['src/planner/cost/profileCosts.ts', /sxy \+= \(x - mx\) \* \(y - my\);/, '− → +', 'the deviations of y sum to 0'],
  // One past the end of the original text reads undefined, which equals no character of the edited text: the common
  // prefix stops there either way.
  ['src/configs/jsonDoc.ts', /while \(p < text\.length && p < next\.length && text\[p\] === next\[p\]\) p\+\+;/, '< → ≤', 'text[text.length] matches nothing'],
  // A newline searched for from a value's end (≥ 1) is never at index 0: < 0 and ≤ 0 agree.
  ['src/configs/tomlDoc.ts', /const rest = text\.slice\(end, text\.indexOf\('\\n', end\) < 0/, '< → ≤', 'a found newline is ≥ 1'],
  ['src/planner/cost/compute.ts', /if \(!\(copies > 0 && dk > 0\)\) return undefined;/, '> → ≥', 'no copies is no FLOPs, and gemmMs of 0 FLOPs is 0'],
  ['src/planner/cost/layout.ts', /const o1 = from\.sharded \? \(af \+ 1\) \/ from\.k : 1;/, '÷ → ×', 'no pair of layouts over 2–12 devices changes (checked exhaustively): the worst receiver never relies on the held piece’s end'],
  ['src/planner/cost/tableBuilder.ts', /const key = c\.d \* \(n \+ 1\) \+ c\.k;/, '+ → −', 'shard groups are looked up for d > 1 with d·k = n, where d(n−1) + n/d is one-to-one'],
  ['src/planner/cost/shardedCollectives.ts', /if \(p <= 1 \|\| bytes <= 0\) return 0;/, '≤ → <', 'collectiveMs returns 0 for one rank'],
  ['src/planner/cost/tableBuilder.ts', /const key = measured \|\| opts\.configsFor \? -1 : layerKey\[li\] \* 3 \+ place;/, 'integer +1', 'place is 0–2: a stride of 4 keeps the keys distinct'],
  ['src/planner/cost/modelStatic.ts', /if \(from === undefined \|\| from >= to\) continue;/, '≥ → >', 'a layer never lists itself as its input (the core resolves inputs to earlier layers)'],
  ['src/configs/tomlDoc.ts', /table\.lastEntryEnd = valueLineEnd < 0/, '< → ≤', 'a newline found at or after a value (which starts past `k =`) is ≥ 1'],
  // With shards = d the HSDP group is every data rank on one node: its shard link is the data group's own link and
  // there is one replica, the same group the plain branch builds.
  ['src/planner/cost/tableBuilder.ts', /g = setup\.hybridShard && shards < c\.d/, '< → ≤', 'shards = d is the plain group'],
  // A copy of 0 bytes takes 0 ms by the formula too (gbs > 0: the spec parser refuses a zero host bandwidth).
  ['src/planner/cost/shardedCollectives.ts', /return bytes > 0 \? bytes \/ \(gbs \* 1e6\) : 0;/, '> → ≥', 'the formula gives 0 at 0'],
  // The probe's batch is its -1 sentinel or a stated batch, and every reader states only whole batches ≥ 1
  // (counts, degrees and world sizes below 1 are refused), so 0 never comes back: > 0 and ≥ 0 agree.
  ['src/configs/evaluate.ts', /return probe\.batch > 0 \? probe\.batch : undefined;/, '> → ≥', 'batches are −1 or ≥ 1'],
  // keptActivations returns fraction 0 only where it keeps what savedUnderKernel saves (no recompute, a layer outside
  // every full-recompute segment, or selective with nothing to drop): the byte difference is then 0 either way.
  ['src/planner/cost/tableBuilder.ts', /const recomputedBytes = kept\.recomputeFraction > 0 \?/, '> → ≥', 'fraction 0 keeps every saved byte'],
  // Every configuration uses all n devices (d = n / k, owtConfigs' 1 × n included), so two layouts' d·(n+1)+k
  // differ by 0 (same d and k) or by at least 2: a stride of 1 for the sharded bit keeps the keys distinct too.
  ['src/planner/cost/tableBuilder.ts', /const key = \(l\.d \* \(n \+ 1\) \+ l\.k\) \* 2 \+ \(l\.sharded \? 1 : 0\);/, '×2 → ×1', 'd·k = n leaves no adjacent keys'],
  // A one-rank shard group moves nothing: every collective over one rank costs 0 (collectiveMs, allGatherMs), its
  // states shard over 1, and the simulator adds gathers only where gatherMs > 0.
  ['src/planner/cost/tableBuilder.ts', /const sg = c\.d > 1 \? shardGroup\(c\) : undefined;/, '> → ≥', 'a one-rank group costs nothing'],
  // 3·key − place keeps keys ≥ 1 distinct as 3·key + place does; those of key 0 go negative and are simply not
  // memoized (a cache miss costs time, not a different table).
  ['src/planner/cost/tableBuilder.ts', /const key = measured \|\| opts\.configsFor \? -1 : layerKey\[li\] \* 3 \+ place;/, '+ → −', 'distinct keys or no memo'],
  // The group-link memo key: with d·k = n, two configurations' d·(n+1)+k differ by 0 or by at least 2, so a stride
  // of 1 for the data/model bit keeps keys distinct (as for layout keys).
  ['src/planner/cost/tableBuilder.ts', /const key = \(c\.d \* \(n \+ 1\) \+ c\.k\) \* 2 \+ \(kind === 'data' \? 1 : 0\);/, '×2 → ×1', 'd·k = n leaves no adjacent keys'],
  // A recompute plan exists exactly when the setup recomputes: `||` only numbers selective layers' places too, which
  // splits the memo more finely around identical costs.
  ['src/planner/cost/tableBuilder.ts', /const place = recompute && setup\.recompute === 'full' \?/, '&& → ||', 'a finer memo of equal costs'],
  // redistribution reports no sources when nothing is missing: at fraction 0 the formula gives 0 too.
  ['src/planner/cost/edgeCosts.ts', /const fwd = fwdFraction\[p\] > 0 \?/, '> → ≥', 'fraction 0 has 0 sources'],
  // The newline searched for starts at the end of a value that follows its key, so it is never at index 0.
  ['src/configs/yamlDoc.ts', /if \(nl < 0\) return \[\{ start: text\.length, end: text\.length, newText: `\\n\$\{indent\}/, '< → ≤', 'valueEnd > 0'],
  // At x = 0 both branches return 0.
  ['src/planner/cost/modelStatic.ts', /return Number\.isFinite\(x\) && \(x as number\) > 0 \? \(x as number\) : 0;/, '> → ≥', 'x = 0 gives 0 either way'],
  // jsonc-parser gives a string value to 'string' nodes only (properties, objects and arrays have none, literals
  // their own type): the typeof test narrows for TypeScript, and `&&` and `||` pick the same nodes.
  ['src/configs/deepspeedSetup.ts', /if \(n\.type === 'string' && typeof n\.value === 'string'\)/, '&& → ||', "only 'string' nodes hold a string value"],
];

/** FNV-1a of a string and the seed: a mutant's place in the sample, stable when other lines change. */
function rank(key) {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  // A final avalanche (murmur3's fmix32) so similar keys spread out.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

function sourceFiles(dir, suffix = '.ts') {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p, suffix));
    else if (name.endsWith(suffix)) out.push(p);
  }
  return out;
}

/** Lines that are code: no comments, imports, type declarations or type members. */
function candidateLines(text) {
  const lines = text.split('\n');
  const out = [];
  let inBlock = false;
  let typeDepth = 0; // > 0 inside an interface or object type declaration
  lines.forEach((line, i) => {
    const t = line.trim();
    const braces = (line.match(/{/g)?.length ?? 0) - (line.match(/}/g)?.length ?? 0);
    if (typeDepth > 0) {
      typeDepth += braces;
      return;
    }
    if (/^(export )?(declare )?(interface|type) /.test(t)) {
      typeDepth = Math.max(0, braces);
      return;
    }
    if (t.startsWith('/*')) inBlock = true;
    if (inBlock) {
      if (t.includes('*/')) inBlock = false;
      return;
    }
    if (!t || t.startsWith('//') || t.startsWith('*') || t.startsWith('import ')) return;
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
        const equivalent = EQUIVALENT.some(([f, re, only]) => rel.includes(f) && re.test(lines[i]) && (only === undefined || only === what));
        if (mutated !== lines[i]) mutants.push({ file: rel, line: i, original: lines[i], mutated, what, equivalent });
      }
    }
  }
}

if (listOnly) {
  const per = new Map();
  for (const m of mutants) if (!m.equivalent) per.set(m.file, (per.get(m.file) ?? 0) + 1);
  for (const [f, n] of per) console.log(`${String(n).padStart(4)} ${f}`);
  console.log(`${String(mutants.filter((m) => !m.equivalent).length).padStart(4)} candidate mutants (${mutants.filter((m) => m.equivalent).length} equivalent ones skipped)`);
  process.exit(0);
}

// A reproducible sample: mutants ordered by a seeded hash of (file, line text, mutation), not by
// position, so adding a test or fixing one line elsewhere leaves the rest of the sample as it was
// (a before/after comparison runs the same mutants). Equivalent mutants keep their place in the
// order but are not run.
for (const m of mutants) m.rank = rank(`${m.file}\n${m.original.trim()}\n${m.what}`);
mutants.sort((a, b) => a.rank - b.rank || a.file.localeCompare(b.file) || a.line - b.line);
const sampled = mutants.slice(0, Math.min(sample, mutants.length));
const chosen = sampled.filter((m) => !m.equivalent);

if (args.includes('--show')) {
  for (const m of sampled) console.log(`${m.equivalent ? 'equivalent ' : ''}${m.file}:${m.line + 1} ${m.what}: ${m.mutated.trim()}`);
  process.exit(0);
}

// The import graph of src/ and test/: which files each test file loads, directly or not.
const graph = new Map();
for (const f of [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'test'))]) {
  const text = readFileSync(f, 'utf8');
  const deps = [];
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const base = resolve(dirname(f), m[1]);
    const hit = [base, `${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile());
    if (hit) deps.push(hit);
  }
  graph.set(f, deps);
}
const reachCache = new Map();
function reach(testFile) {
  if (reachCache.has(testFile)) return reachCache.get(testFile);
  const seen = new Set();
  const stack = [testFile];
  while (stack.length) {
    const f = stack.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    stack.push(...(graph.get(f) ?? []));
  }
  const rels = new Set([...seen].map((p) => relative(root, p)));
  reachCache.set(testFile, rels);
  return rels;
}
const allTests = sourceFiles(join(root, 'test'), '.test.ts').map((p) => relative(root, p));
const poolFor = (file) => {
  const subs = testOverride.length ? testOverride : ROOM_TESTS[ROOMS.find((r) => file.startsWith(r))];
  return allTests.filter((t) => subs.some((s) => t.includes(s)));
};
const testsFor = (file) => poolFor(file).filter((t) => reach(join(root, t)).has(file));

const work = mkdtempSync(join(tmpdir(), 'wap-mutate-'));
const cleanup = () => rmSync(work, { recursive: true, force: true });
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
for (const entry of ['src', 'test', 'examples', 'scripts', 'webview', 'media', 'package.json', 'tsconfig.json']) {
  if (existsSync(join(root, entry))) cpSync(join(root, entry), join(work, entry), { recursive: true });
}
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
if (existsSync(join(root, 'dist'))) cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });

/** Runs one test file; 'pass', 'fail' or 'timeout', and how long it took. */
function runTestFile(test, limitS) {
  const t0 = Date.now();
  // The file runs in this one process, not under `--test`, whose runner forks a child per file: a mutant that loops
  // forever would outlive the SIGKILL of its parent and keep a core busy after the run.
  const r = spawnSync(process.execPath, ['--import', 'tsx', test], { cwd: work, timeout: Math.round(limitS * 1000), encoding: 'utf8', killSignal: 'SIGKILL' });
  const s = (Date.now() - t0) / 1000;
  if (r.error?.code === 'ETIMEDOUT' || r.signal) return { outcome: 'timeout', s };
  return { outcome: r.status === 0 ? 'pass' : 'fail', s };
}

const needed = [...new Set(chosen.flatMap((m) => testsFor(m.file)))].sort();
console.log(`mutation benchmark: ${chosen.length} of ${mutants.length} candidate mutants (seed ${flag('seed', '1')}; ${sampled.length - chosen.length} equivalent in the sample skipped), ${needed.length} test files`);
const baselineS = new Map();
// --trust: the unmutated tests are known to pass (just run them); order by file size and skip the baseline run.
const trust = args.includes('--trust');
if (trust) for (const t of needed) baselineS.set(t, statSync(join(root, t)).size / 5000);
for (const t of trust ? [] : needed) {
  const { outcome, s } = runTestFile(t, timeoutS);
  if (outcome !== 'pass') {
    console.error(`the unmutated test ${t} does not pass (${outcome}); fix it first`);
    process.exit(1);
  }
  baselineS.set(t, s);
}

let killed = 0;
const survivors = [];
const t0 = Date.now();
for (const [n, m] of chosen.entries()) {
  const path = join(work, m.file);
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  lines[m.line] = m.mutated;
  writeFileSync(path, lines.join('\n'));
  const tests = testsFor(m.file).sort((a, b) => baselineS.get(a) - baselineS.get(b));
  let outcome = 'pass';
  let by = '';
  for (const t of tests) {
    // A mutant that makes a file run 10× longer than unmutated (an endless loop) is killed too.
    const r = runTestFile(t, trust ? timeoutS : Math.min(timeoutS, Math.max(30, 10 * baselineS.get(t))));
    if (r.outcome !== 'pass') {
      outcome = r.outcome;
      by = t;
      break;
    }
  }
  writeFileSync(path, text);
  const dead = outcome !== 'pass';
  if (dead) killed++;
  else survivors.push(m);
  const why = dead ? `by ${relative('test', by)}` : tests.length ? `${tests.length} files` : 'no test imports it';
  console.log(`${String(n + 1).padStart(3)}. ${dead ? 'killed ' : 'SURVIVED'} (${outcome}, ${why}) ${m.file}:${m.line + 1} ${m.what}: ${m.mutated.trim().slice(0, 100)}`);
}
const rate = chosen.length ? (100 * killed) / chosen.length : 0;
console.log(`\nkill rate: ${killed}/${chosen.length} = ${rate.toFixed(1)} % (seed ${flag('seed', '1')}, ${((Date.now() - t0) / 60000).toFixed(1)} min)`);
if (survivors.length) {
  console.log('survivors (each is a missing test or an equivalent mutant):');
  for (const s of survivors) console.log(`  ${s.file}:${s.line + 1} ${s.what}\n    - ${s.original.trim()}\n    + ${s.mutated.trim()}`);
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(survivors.map(({ file, line, what, original, mutated }) => ({ file, line: line + 1, what, original: original.trim(), mutated: mutated.trim() })), null, 2));
