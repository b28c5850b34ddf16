/**
 * Runs every bench/*.bench.ts (sorted by name) and prints each returned table
 * as aligned text with its title above it. A bench that throws prints its
 * error and the run goes on; the exit code is always 0 (benchmarks report,
 * they do not gate).
 *
 * Usage: node --import tsx bench/run.ts [filter…]  — only files whose name contains a filter.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface BenchTable {
  title: string;
  rows: Array<Record<string, string | number>>;
}

type BenchFn = () => Promise<BenchTable[]>;

function formatCell(v: string | number | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3);
}

export function renderTable(table: BenchTable): string {
  const columns: string[] = [];
  for (const row of table.rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = table.rows.map((row) => columns.map((c) => formatCell(row[c])));
  const numeric = columns.map((c) => table.rows.every((row) => row[c] === undefined || typeof row[c] === 'number'));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => (numeric[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [table.title, line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

async function loadBench(file: string): Promise<BenchFn> {
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  // tsx may wrap a CommonJS-compiled module's default export once more.
  let fn: unknown = mod.default;
  if (fn && typeof fn === 'object' && 'default' in fn) fn = (fn as { default: unknown }).default;
  if (typeof fn !== 'function') throw new Error('no default export function');
  return fn as BenchFn;
}

async function main(filters: string[]): Promise<void> {
  const dir = __dirname;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
    .sort();
  if (files.length === 0) console.log(`no bench files matched${filters.length ? ` ${filters.join(', ')}` : ''}`);
  for (const f of files) {
    const started = Date.now();
    try {
      const tables = await (await loadBench(join(dir, f)))();
      console.log(`== ${f} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
      for (const t of tables) console.log(`${renderTable(t)}\n`);
    } catch (err) {
      console.log(`== ${f} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
  }
}

main(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (err: unknown) => {
    console.log(`bench runner error: ${String(err)}`);
    process.exitCode = 0;
  },
);
