/**
 * The torchvision corpus: every builder of one family (classification,
 * segmentation, video) of the installed torchvision, read by the Python
 * frontend from torchvision's own, unmodified model files, compared with what
 * torch itself builds (parameter count and every leaf module's output shape).
 * Shared by the acceptance tests (test/frontends/torchvision-corpus.test.ts,
 * torchvision-families.test.ts) and `npm run bench`.
 *
 * Ground truth comes from test/fixtures/torchvision/truth.py run by
 * /usr/bin/python3 (Debian's python3-torch and python3-torchvision); it is
 * cached in test-artifacts/ per torchvision version, so a machine pays for it
 * once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { analyzeModel } from '../../src/core/analyze';
import { marksIncomplete } from '../../src/core/completeness';
import type { AnalyzedModel, Diagnostic, FrontendResult } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';

export const PYTHON = '/usr/bin/python3';
const repoRoot = join(__dirname, '..', '..');
const truthScript = join(repoRoot, 'test', 'fixtures', 'torchvision', 'truth.py');
const artifacts = join(repoRoot, 'test-artifacts');

export interface BuilderTruth {
  module: string;
  params: number;
  input: number[];
  /** Leaf module path → output shape (without batch) per call, in call order. */
  leaves: Record<string, number[][]>;
  /** Why torch gave no leaf shapes (a kernel without a meta rule, a forward too slow on the CPU): params only. */
  shapesUnavailable?: string;
}

export type Family = 'classification' | 'segmentation' | 'video';

export interface Truth {
  torchvision: string;
  torch: string;
  builders: Record<string, BuilderTruth>;
}

export interface BuilderOutcome {
  builder: string;
  file: string;
  truthParams: number;
  params: number | undefined;
  leaves: number;
  /** Leaf calls whose shape differs from torch's (or is missing). */
  shapeMismatches: string[];
  exact: boolean;
  /** Warnings and errors the frontend and analysis gave for this model (and its file). */
  diagnostics: Diagnostic[];
  millis: number;
}

/** Where torchvision lives and which version, asked of the interpreter once. */
function torchvisionLocation(): { dir: string; version: string } {
  let out: string;
  try {
    out = execFileSync(PYTHON, ['-c', 'import os, torch, torchvision; print(torchvision.__version__); print(os.path.dirname(torchvision.__file__))'], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    throw new Error(
      `The torchvision corpus needs torch and torchvision in ${PYTHON} (Debian: apt-get install python3-torch python3-torchvision; .ci/run installs them). ` +
        `It failed with: ${stderr.trim().split('\n').pop()}`,
    );
  }
  const [version, dir] = out.trim().split('\n');
  return { dir, version };
}

/** torch's own numbers, computed once per machine, torchvision version and family. */
export function loadTruth(family: Family = 'classification'): { truth: Truth; dir: string; fresh: boolean } {
  const { dir, version } = torchvisionLocation();
  const cached = join(artifacts, `torchvision-${version}-${family === 'classification' ? '' : `${family}-`}truth.json`);
  let fresh = false;
  if (!existsSync(cached)) {
    mkdirSync(artifacts, { recursive: true });
    const partial = cached + '.partial';
    // Building all 80 models and one forward each: a few minutes on two cores.
    execFileSync(PYTHON, [truthScript, `--family=${family}`, partial], { timeout: 15 * 60_000, stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(partial, cached);
    fresh = true;
  }
  return { truth: JSON.parse(readFileSync(cached, 'utf8')) as Truth, dir: dirname(dir), fresh };
}

function sourceFile(packageParent: string, module: string): string {
  return join(packageParent, ...module.split('.')) + '.py';
}

const sameShape = (a: readonly number[] | undefined, b: readonly number[]): boolean => !!a && a.length === b.length && a.every((d, i) => d === b[i]);

/** Reads every builder through the frontend and compares it with torch. */
export async function runCorpus(truth: Truth, packageParent: string): Promise<BuilderOutcome[]> {
  await initFrontends();
  const parsed = new Map<string, { result: FrontendResult | undefined; millis: number }>();
  const outcomes: BuilderOutcome[] = [];
  for (const [builder, t] of Object.entries(truth.builders)) {
    const file = sourceFile(packageParent, t.module);
    // Read for the size torch ran, as `--input` gives it: a forward that computes sizes from its input
    // (a segmentation head upsampling to `x.shape[-2:]`) is read for that size.
    const key = `${file}|${t.input.join(',')}`;
    let p = parsed.get(key);
    if (!p) {
      const started = performance.now();
      const result = parseSource(file, readFileSync(file, 'utf8'), { libraryRoots: [packageParent] }, { inputShape: t.input });
      p = { result, millis: performance.now() - started };
      parsed.set(key, p);
    }
    const spec = p.result?.models.find((m) => m.name === builder);
    const model: AnalyzedModel | undefined = spec ? analyzeModel(spec, { inputShape: t.input }) : undefined;
    const shapeMismatches: string[] = [];
    let leaves = 0;
    for (const [name, calls] of Object.entries(t.leaves)) {
      const mine = model?.layers.filter((l) => l.name === name) ?? [];
      calls.forEach((shape, i) => {
        leaves++;
        const got = mine[i]?.outputShape;
        if (!sameShape(got, shape)) shapeMismatches.push(`${name}${i ? `#${i + 1}` : ''}: ${got ? `[${got.join(',')}]` : 'missing'} ≠ [${shape.join(',')}]`);
      });
    }
    const params = model?.totals.params;
    const diagnostics = [...(p.result?.diagnostics ?? []), ...(model?.diagnostics ?? [])].filter((d) => d.severity !== 'info' || d.code !== 'assumed-input');
    outcomes.push({
      builder,
      file: t.module.replace(/^torchvision\.models\./, ''),
      truthParams: t.params,
      params,
      leaves,
      shapeMismatches,
      exact: params === t.params && shapeMismatches.length === 0 && !t.shapesUnavailable,
      diagnostics,
      millis: p.millis,
    });
  }
  return outcomes;
}

/** The table the test and the bench print. */
export function corpusRows(outcomes: BuilderOutcome[]): Array<Record<string, string | number>> {
  return outcomes.map((o) => ({
    builder: o.builder,
    file: o.file,
    'torch params': o.truthParams,
    'WAP params': o.params ?? '-',
    leaves: o.leaves,
    'shape diffs': o.shapeMismatches.length,
    exact: o.exact ? 'yes' : 'NO',
    why: o.exact ? '' : firstReason(o),
  }));
}

export function firstReason(o: BuilderOutcome): string {
  // What made the reading incomplete says more than a harmless skipped loop in weight initialisation.
  const d = o.diagnostics.find(marksIncomplete) ?? o.diagnostics.find((x) => x.severity !== 'info') ?? o.diagnostics[0];
  return d ? `${d.code ?? ''}: ${d.message}`.slice(0, 110) : o.params === undefined ? 'no model reported' : '(no diagnostic)';
}
