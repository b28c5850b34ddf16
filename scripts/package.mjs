// `npm run package`: a production build, then a .vsix with @vscode/vsce.
// Everything the extension runs is bundled into dist/ and media/ (wasm files included),
// so vsce packs no node_modules; the optional tfjs-node-gpu backend is the user's own install.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = process.argv[2] ?? `${name}-${version}.vsix`;
run(process.execPath, ['scripts/build.mjs', '--production']);
run(process.execPath, [
  join(root, 'node_modules', '@vscode', 'vsce', 'vsce'),
  'package',
  '--no-dependencies',
  '--allow-missing-repository',
  '--skip-license',
  // The README's screenshots are relative to the repository; no hosting URL exists to rewrite them to.
  '--no-rewrite-relative-links',
  '--out',
  out,
]);
const bytes = statSync(resolve(root, out)).size;
console.log(`${out}: ${(bytes / 1024 / 1024).toFixed(2)} MB`);
if (bytes > 10 * 1024 * 1024) {
  console.error('the .vsix is over the 10 MB budget');
  process.exit(1);
}
