/**
 * A script that puts a folder on its own import path before importing from it (DeepSpeed-Chat's step-1 main.py:
 * `sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), os.path.pardir)))`, then
 * `from utils… import …`). Before, those imports were "not installed", and the model they build was lost.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const step = join(__dirname, '..', 'fixtures', 'sys-path', 'training', 'step1_supervised_finetuning');
const script = join(step, 'main.py');
// The workspace is elsewhere: only the script's own sys.path entry reaches the helpers one folder up.
const imports = { workspaceFolders: [tmpdir()], libraryRoots: [] };

before(async () => {
  await initFrontends();
});

const expected = 4 * (256 * 256 + 256) + 256 * 10 + 10;

test('sys.path.append of the folder above, computed from __file__: the helpers there are imported and the model they build is read', async () => {
  const r = await analyzeSource(script, readFileSync(script, 'utf8'), {}, imports);
  assert.equal(r.models[0]?.totals.params, expected, JSON.stringify([...r.diagnostics, ...(r.models[0]?.diagnostics ?? [])].map((d) => d.message)));
  assert.ok(!r.diagnostics.some((d) => /could not be resolved/.test(d.message)));
});

test('sys.path.insert(0, "..") starts at the run’s directory, the script’s folder; a path WAP cannot compute is said', async () => {
  const text = readFileSync(script, 'utf8').replace(/sys\.path\.append\([\s\S]*?\)\)\)/, 'sys.path.insert(0, "..")');
  assert.match(text, /sys\.path\.insert\(0, "\.\."\)/);
  const relative = await analyzeSource(script, text, {}, imports);
  assert.equal(relative.models[0]?.totals.params, expected);
  const unknown = await analyzeSource(script, text.replace('sys.path.insert(0, "..")', 'sys.path.insert(0, os.environ["HELPERS"])'), {}, imports);
  const said = [...unknown.diagnostics, ...(unknown.models[0]?.diagnostics ?? [])].find((d) => d.code === 'sys-path-unknown');
  assert.match(said?.message ?? '', /adds a folder WAP cannot compute to the import path: modules imported from it may not resolve/);
});
