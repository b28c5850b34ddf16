/**
 * Hydra composition (frontends/python/hydraCompose.ts) and OmegaConf interpolation (omegaInterpolation.ts), read
 * from real files in a temporary folder. Each expected tree is what `@hydra.main` hands the task function for the
 * same files and command line (Hydra 1.3, version_base >= 1.1).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { composeHydraConfig, type Composed, type HydraSources } from '../../src/frontends/python/hydraCompose';
import { resolveInterpolations, Unresolved } from '../../src/frontends/python/omegaInterpolation';

const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A config folder holding these files (paths relative to it). */
function configs(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'wap-hydra-'));
  made.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

const disk: HydraSources = {
  read(path) {
    try {
      return { text: readFileSync(path, 'utf8') };
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? { why: 'no such file', missing: true } : { why: String(e) };
    }
  },
  isDir(path) {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  },
};

function compose(dir: string, overrides: string[] = [], configName = 'config'): Composed {
  const r = composeHydraConfig({ configDir: dir, configName, overrides }, disk);
  if ('why' in r) assert.fail(r.why);
  return r;
}

const DB = { 'db/mysql.yaml': 'driver: mysql\nport: 3306\n', 'db/sqlite.yaml': 'driver: sqlite\nport: 0\n' };

test('a group default is merged under its group; without _self_ the config’s own values come last', () => {
  const dir = configs({ ...DB, 'config.yaml': 'defaults:\n  - db: mysql\ndb:\n  port: 1\nname: app\n' });
  const r = compose(dir);
  assert.deepEqual(r.config, { db: { driver: 'mysql', port: 1 }, name: 'app' });
  assert.deepEqual(r.files.sort(), [join(dir, 'config.yaml'), join(dir, 'db/mysql.yaml')].sort());
  assert.deepEqual(r.notes, []);
});

test('_self_ first: the defaults override the config’s own values', () => {
  const dir = configs({ ...DB, 'config.yaml': 'defaults:\n  - _self_\n  - db: mysql\ndb:\n  port: 1\n' });
  assert.deepEqual(compose(dir).config, { db: { driver: 'mysql', port: 3306 } });
});

test('config_name may carry .yaml, and an unreadable or malformed primary says which file', () => {
  const dir = configs({ 'train.yaml': 'lr: 0.1\n', 'bad.yaml': 'a: [1,\nb: 2\n' });
  assert.deepEqual(compose(dir, [], 'train.yaml').config, { lr: 0.1 });
  assert.deepEqual(composeHydraConfig({ configDir: dir, configName: 'nope', overrides: [] }, disk), { why: 'nope.yaml: no such file' });
  const bad = composeHydraConfig({ configDir: dir, configName: 'bad', overrides: [] }, disk);
  assert.ok('why' in bad && bad.why.startsWith('bad.yaml: ') && !bad.why.includes('\n'), JSON.stringify(bad));
});

test('a # @package header and a group@pkg default place the content elsewhere', () => {
  const dir = configs({
    ...DB,
    'env/prod.yaml': '# @package _global_\nworkers: 8\ndb:\n  host: prod\n',
    'opt/adam.yaml': '# @package optimizer.main\nlr: 0.001\n',
    'config.yaml': 'defaults:\n  - db@backup: sqlite\n  - db: mysql\n  - env: prod\n  - opt: adam\n  - db@_global_: sqlite\n',
  });
  assert.deepEqual(compose(dir).config, {
    backup: { driver: 'sqlite', port: 0 },
    db: { driver: 'mysql', port: 3306, host: 'prod' },
    workers: 8,
    optimizer: { main: { lr: 0.001 } },
    driver: 'sqlite',
    port: 0,
  });
});

test('a missing optional group is skipped without a word, as Hydra does; a missing required one is the answer', () => {
  const dir = configs({ ...DB, 'config.yaml': 'defaults:\n  - db: mysql\n  - optional local: default\nx: 1\n' });
  const r = compose(dir);
  assert.deepEqual(r.config, { db: { driver: 'mysql', port: 3306 }, x: 1 });
  assert.deepEqual(r.notes, []);
  writeFileSync(join(dir, 'config.yaml'), 'defaults:\n  - db: oracle\n');
  assert.deepEqual(composeHydraConfig({ configDir: dir, configName: 'config', overrides: [] }, disk), { why: 'db/oracle.yaml: no such file' });
});

test('defaults inside a group config are relative to its group; a leading / is from the config folder', () => {
  const dir = configs({
    'config.yaml': 'defaults:\n  - model: gpt\n',
    'model/gpt.yaml': 'defaults:\n  - encoder: small\n  - /optim: adam\n  - base\n  - _self_\nn_layer: 12\n',
    'model/base.yaml': 'dropout: 0.1\nn_layer: 2\n',
    'model/encoder/small.yaml': 'width: 256\n',
    'optim/adam.yaml': 'lr: 0.0003\n',
  });
  assert.deepEqual(compose(dir).config, { model: { encoder: { width: 256 }, optim: { lr: 0.0003 }, dropout: 0.1, n_layer: 12 } });
  // The nested group is chosen by its full path on the command line.
  writeFileSync(join(dir, 'model/encoder/big.yaml'), 'width: 1024\n');
  assert.deepEqual((compose(dir, ['model/encoder=big']).config.model as { encoder: unknown }).encoder, { width: 1024 });
});

test('a list of options merges each in order; a group not in the defaults list is added; a defaults cycle is the answer', () => {
  const dir = configs({
    'config.yaml': 'defaults:\n  - aug: [flip, crop]\n  - _self_\n',
    'aug/flip.yaml': 'p: 0.5\nflip: true\n',
    'aug/crop.yaml': 'p: 0.9\nsize: 224\n',
    'extra/on.yaml': 'enabled: yes\n',
    'loop/a.yaml': 'defaults:\n  - b\n',
    'loop/b.yaml': 'defaults:\n  - a\n',
  });
  assert.deepEqual(compose(dir).config, { aug: { p: 0.9, flip: true, size: 224 } });
  assert.deepEqual(compose(dir, ['aug=[crop]']).config, { aug: { p: 0.9, size: 224 } });
  const r = compose(dir, ['extra=on']);
  assert.deepEqual(r.config.extra, { enabled: true });
  assert.deepEqual(r.notes, ['extra=on: extra is not in the defaults list (Hydra asks for +extra=...); added']);
  assert.deepEqual(composeHydraConfig({ configDir: dir, configName: 'config', overrides: ['+loop=a'] }, disk), {
    why: 'defaults cycle: config.yaml -> loop/a.yaml -> loop/b.yaml -> loop/a.yaml',
  });
});

test('group=option on the command line, and override entries in a later config, choose the option', () => {
  const dir = configs({
    ...DB,
    'config.yaml': 'defaults:\n  - db: mysql\n  - experiment: null\n',
    'experiment/small.yaml': '# @package _global_\ndefaults:\n  - override /db: sqlite\nepochs: 1\n',
  });
  assert.deepEqual(compose(dir, ['db=sqlite']).config, { db: { driver: 'sqlite', port: 0 } });
  assert.deepEqual(compose(dir, ['experiment=small']).config, { db: { driver: 'sqlite', port: 0 }, epochs: 1 });
  // The command line wins over the experiment's override.
  assert.deepEqual(compose(dir, ['experiment=small', 'db=mysql']).config, { db: { driver: 'mysql', port: 3306 }, epochs: 1 });
  assert.deepEqual(compose(dir, ['~db']).config, {});
});

test('+group=option appends a group; key=value, +key=value, ++key=value and ~key change values', () => {
  const dir = configs({ ...DB, 'config.yaml': 'model:\n  net:\n    lin1_size: 64\n    sizes: [1, 2]\ntrainer:\n  max_epochs: 10\n  devices: 1\n' });
  const r = compose(dir, ['+db=mysql', 'model.net.lin1_size=128', 'trainer.max_epochs=1e-4', '+trainer.precision=bf16-mixed', '++seed=42', '~trainer.devices', 'model.net.sizes=[3,4]', "name='007'", 'tags={a:1, b:[x, y]}']);
  assert.deepEqual(r.config, {
    model: { net: { lin1_size: 128, sizes: [3, 4] } },
    trainer: { max_epochs: 0.0001, precision: 'bf16-mixed' },
    db: { driver: 'mysql', port: 3306 },
    seed: 42,
    name: '007',
    tags: { a: 1, b: ['x', 'y'] },
  });
  assert.deepEqual(r.notes, [
    "name='007': name is not in the config (Hydra asks for +name=...); set anyway",
    'tags={a:1, b:[x, y]}: tags is not in the config (Hydra asks for +tags=...); set anyway',
  ]);
});

test('a sweep is planned at its first value, and Hydra’s own flags and hydra.* keys are skipped', () => {
  const dir = configs({ ...DB, 'config.yaml': 'defaults:\n  - db: mysql\nlr: 0.1\nseed: 0\n', 'other.yaml': 'lr: 0.5\n' });
  const r = compose(dir, ['-m', 'lr=1,2,3', 'db=sqlite,mysql', 'hydra.run.dir=/tmp/x', 'hydra/launcher=joblib', '--cfg', 'job', 'seed=range(5,10)']);
  assert.deepEqual(r.config, { db: { driver: 'sqlite', port: 0 }, lr: 1, seed: 5 });
  assert.deepEqual(r.notes, [
    '--multirun: one run is planned, each sweep at its first value',
    'sweep lr=1,2,3: planned at its first value 1',
    'sweep db=sqlite,mysql: planned at its first value sqlite',
    'sweep seed=range(5,10): planned at its first value 5',
  ]);
  assert.deepEqual(compose(dir, ['--config-name', 'other']).config, { lr: 0.5 });
  assert.deepEqual(compose(dir, ['--config-name=other', 'lr=2']).config, { lr: 2 });
  assert.deepEqual(compose(dir, ['-cn', 'other']).config, { lr: 0.5 });
});

test('interpolations resolve after composition: typed, embedded, relative, list index, env, missing, ??? and cycles', () => {
  const dir = configs({
    'model/gpt.yaml': 'name: gpt\nn_embd: 768\nhead_dim: ${.n_embd}\nwidth: ${..data.sizes[1]}\n',
    'config.yaml': [
      'defaults:\n  - model: gpt\n  - _self_',
      'data:\n  sizes: [32, 64]\n  batch: ${oc.env:BATCH,8}\n  workers: ${oc.env:WORKERS}\n  quoted: ${oc.env:Q,\'8\'}',
      'seed: 4\nlr: 0.1\nflag: true',
      'run: run_${model.name}_${seed}_${lr}_${flag}_${nothing_here_is_none}',
      'nothing_here_is_none: null',
      'dim: ${model.n_embd}\nchain: ${dim}\nfirst: ${data.sizes.0}\nlist: ${data.sizes}',
      'lost: ${model.depth}\nmust: ???\nneeds_must: ${must}\nloop_a: ${loop_b}\nloop_b: ${loop_a}',
      'escaped: \\${seed}\nbad_concat: x_${oc.env:HOME}',
      'picked: ${oc.select:model.depth,6}\nout: ${hydra:runtime.output_dir}\ncustom: ${eval:1+1}',
    ].join('\n'),
  });
  const c = compose(dir, ['seed=7']).config as Record<string, any>;
  assert.deepEqual(c.model, { name: 'gpt', n_embd: 768, head_dim: 768, width: 64 });
  assert.equal(c.run, 'run_gpt_7_0.1_True_None');
  assert.equal(c.dim, 768);
  assert.equal(c.chain, 768);
  assert.equal(c.first, 32);
  assert.deepEqual(c.list, [32, 64]);
  assert.equal(c.data.batch, '8', 'oc.env hands back a string, default included (OmegaConf 2.1+)');
  assert.equal(c.data.quoted, '8');
  assert.deepEqual(c.data.workers, new Unresolved('${oc.env:WORKERS} reads the environment variable WORKERS at run time'));
  assert.deepEqual(c.lost, new Unresolved('${model.depth}: no key model.depth in the config'));
  assert.ok(c.must instanceof Unresolved && c.must.why === 'must is ??? (mandatory, given at run time)');
  assert.equal(c.needs_must.why, 'must is ??? (mandatory, given at run time)');
  assert.equal(c.loop_a.why, 'loop_a: interpolation cycle loop_a -> loop_b -> loop_a');
  assert.ok(c.loop_b instanceof Unresolved && c.loop_b.why.includes('interpolation cycle'));
  assert.equal(c.escaped, '${seed}');
  assert.equal(c.bad_concat.why, '${oc.env:HOME} reads the environment variable HOME at run time');
  assert.equal(c.picked, 6);
  assert.ok(c.out instanceof Unresolved && c.out.why.includes('hydra'));
  assert.ok(c.custom instanceof Unresolved && c.custom.why.includes('eval'));
});

test('resolveInterpolations alone: new tree, Python str() in text, resolvers named, lists and nested keys', () => {
  const input = {
    a: { b: 1e-5, c: '${.b}', d: [10, '${..b}', '${a.d[0]}'] },
    s: 'x=${a.b} y=${a.d} z=${flags}',
    flags: { on: false },
    pick: 'b',
    nested: '${a.${pick}}',
    dec: '${oc.decode:"1"}',
    create: '${oc.create:{a: 1}}',
    sel: '${oc.select:a.b}',
    selmiss: '${oc.select:a.zz}',
    envnull: '${oc.env:X,null}',
    bad: '${a.b',
  };
  const frozen = JSON.stringify(input);
  const out = resolveInterpolations(input) as Record<string, any>;
  assert.equal(JSON.stringify(input), frozen);
  assert.deepEqual(out.a, { b: 1e-5, c: 1e-5, d: [10, 1e-5, 10] });
  assert.equal(out.s, "x=1e-05 y=[10, 1e-05, 10] z={'on': False}");
  assert.equal(out.nested, 1e-5);
  assert.equal(out.dec.why, '${oc.decode:"1"}: OmegaConf\'s oc.decode resolver is not evaluated by WAP');
  assert.ok(out.create instanceof Unresolved && out.create.why.includes('oc.create'));
  assert.equal(out.sel, 1e-5);
  assert.equal(out.selmiss, null);
  assert.equal(out.envnull, null);
  assert.ok(out.bad instanceof Unresolved);
});

test('lightning-hydra-template: train.yaml with data, model and trainer groups, net size overridden', () => {
  const dir = configs({
    'train.yaml': [
      'defaults:\n  - _self_\n  - data: mnist\n  - model: mnist\n  - trainer: default\n  - hydra: default\n  - optional local: default',
      'task_name: "train"\ntags: ["dev"]\ntrain: True\ntest: True\nckpt_path: null\nseed: null',
    ].join('\n'),
    'data/mnist.yaml': '_target_: src.data.mnist_datamodule.MNISTDataModule\ndata_dir: ${paths.data_dir}\nbatch_size: 128\ntrain_val_test_split: [55_000, 5_000, 10_000]\nnum_workers: 0\npin_memory: False\n',
    'model/mnist.yaml': [
      '_target_: src.models.mnist_module.MNISTLitModule',
      'optimizer:\n  _target_: torch.optim.Adam\n  _partial_: true\n  lr: 0.001\n  weight_decay: 0.0',
      'net:\n  _target_: src.models.components.simple_dense_net.SimpleDenseNet\n  input_size: 784\n  lin1_size: 64\n  lin2_size: 128\n  lin3_size: 64\n  output_size: 10',
      'compile: false',
    ].join('\n'),
    'trainer/default.yaml': '_target_: lightning.pytorch.trainer.Trainer\ndefault_root_dir: ${paths.output_dir}\nmin_epochs: 1\nmax_epochs: 10\naccelerator: cpu\ndevices: 1\n',
    'hydra/default.yaml': 'defaults:\n  - override hydra_logging: colorlog\nrun:\n  dir: ${paths.log_dir}\n',
  });
  const r = compose(dir, ['model.net.lin1_size=128', 'trainer=default'], 'train');
  const c = r.config as Record<string, any>;
  assert.deepEqual(c.model, {
    _target_: 'src.models.mnist_module.MNISTLitModule',
    optimizer: { _target_: 'torch.optim.Adam', _partial_: true, lr: 0.001, weight_decay: 0 },
    net: { _target_: 'src.models.components.simple_dense_net.SimpleDenseNet', input_size: 784, lin1_size: 128, lin2_size: 128, lin3_size: 64, output_size: 10 },
    compile: false,
  });
  assert.deepEqual(Object.keys(c), ['task_name', 'tags', 'train', 'test', 'ckpt_path', 'seed', 'data', 'model', 'trainer']);
  assert.equal(c.data.batch_size, 128);
  assert.deepEqual(c.data.train_val_test_split, [55000, 5000, 10000]);
  assert.deepEqual(c.data.data_dir, new Unresolved('${paths.data_dir}: no key paths.data_dir in the config'));
  assert.equal(c.trainer.max_epochs, 10);
  assert.equal(c.tags[0], 'dev');
  assert.equal(c.train, true);
  assert.deepEqual(r.notes, []);
  assert.equal(r.files.length, 4); // train, data, model, trainer: Hydra's own group is not the task's config
});
