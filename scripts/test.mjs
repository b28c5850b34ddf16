// Runs every test/**/*.test.ts on Node's built-in runner (tsx as the loader).
// Node 20's --test takes no globs, so the files are listed here.
// Usage: node scripts/test.mjs [substring…]  — only files whose path contains one of the substrings.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...selected], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
