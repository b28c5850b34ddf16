import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, readConfigSetups, resolveLaunchedModel } from '../../src/configs';
import { disk } from './helpers';
import { alexnetPlan } from './fixtures';

before(() => initConfigReaders());

/** One clear 'malformed-config' error, no fix, no edits from fix-all, and fast. */
function assertMalformed(fileName: string, text: string, message: RegExp, budgetMs = 2000): void {
  const t0 = performance.now();
  const { findings } = checkConfig(fileName, text, alexnetPlan());
  const elapsed = performance.now() - t0;
  assert.equal(findings.length, 1, `${fileName}: ${JSON.stringify(findings.map((f) => f.message))}`);
  const [f] = findings;
  assert.equal(f!.code, 'malformed-config');
  assert.equal(f!.severity, 'error');
  assert.equal(f!.fix, undefined);
  assert.match(f!.message, message);
  assert.ok(elapsed < budgetMs, `${fileName} took ${elapsed.toFixed(0)} ms`);
  assert.deepEqual(fixAll(fileName, text, alexnetPlan()).edits, []);
}

test('YAML alias bomb (billion laughs) is refused, not expanded', () => {
  let text = 'num_processes: 8\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let prev = 'a';
  for (let i = 0; i < 9; i++) {
    text += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
    prev = `b${i}`;
  }
  assertMalformed('accelerate_config.yaml', text, /Excessive alias count/);
});

test('a 50 MB JSON file gets one diagnostic within the time budget', () => {
  // Built in one buffer so the string is flat, like a file read from disk.
  const size = 50 * 1024 * 1024 + 65; // odd, so the byte before the closing '0]}' is a ','
  const buf = Buffer.alloc(size, '0,');
  let head = '{"train_batch_size": 8, "blob": [';
  if (head.length % 2) head += ' '; // the fill then continues with '0'
  buf.write(head, 0, 'latin1');
  buf.write('0]}', size - 3, 'latin1');
  const text = buf.toString('latin1');
  assert.ok(text.length > 50 * 1024 * 1024);
  assertMalformed('ds_config.json', text, /^Config is 50\.0 MB; WAP reads training configs up to 5 MB/);
  // MB are binary, as the limit is: 5.25 × 2²⁰ characters print as 5.3 MB.
  const opening = '{"train_batch_size": 8, "blob": "';
  const justOver = `${opening}${'0'.repeat(5.25 * 1024 * 1024 - opening.length - 2)}"}`;
  assert.equal(justOver.length, 5.25 * 1024 * 1024);
  assertMalformed('ds_config.json', justOver, /^Config is 5\.3 MB; /);
  // Marked on its first character: a squiggle under 50 MB would cost the editor more than the check saved.
  assert.deepEqual(checkConfig('ds_config.json', text, alexnetPlan()).findings[0]!.range, { start: 0, end: 1 });
});

test('wrong types in every format', () => {
  assertMalformed('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: eight\n', /num_processes must be a positive whole number, got "eight"/);
  assertMalformed('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 0\n', /num_processes must be a positive whole number, got 0/);
  assertMalformed('a.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 0\nnum_processes: 8\n', /num_machines must be a positive whole number, got 0/);
  assertMalformed('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: [8]\n', /num_processes must be a single value/);
  assertMalformed('ds.json', '{"train_batch_size": "eight", "train_micro_batch_size_per_gpu": 1}', /train_batch_size must be a positive whole number or "auto", got "eight"/);
  assertMalformed('ds.json', '{"train_batch_size": 8, "zero_optimization": {"stage": "two"}}', /zero_optimization.stage must be 0, 1, 2 or 3, got "two"$/);
  assertMalformed('t.py', 'import lightning as L\nL.Trainer(devices="eight")\n', /Trainer devices must be a count/);
  assertMalformed('t.py', 'import lightning as L\nL.Trainer(devices=4, num_nodes="two")\n', /num_nodes must be a whole number/);
  // A device list of literals with one that is not a whole number: indices and strings mixed, or a float.
  assertMalformed('t.py', 'import lightning as L\nL.Trainer(devices=[0, "1"])\n', /Trainer devices=\[…\] must list GPU indices/);
  assertMalformed('t.py', 'import lightning as L\nL.Trainer(devices=[0, 1.5])\n', /Trainer devices=\[…\] must list GPU indices/);
  assertMalformed('k.py', 'import tensorflow as tf\ntf.distribute.MirroredStrategy(devices=[0, 1])\n', /device names like "\/gpu:0"/);
  assertMalformed('run.sh', 'torchrun --nproc_per_node=eight t.py\n', /--nproc_per_node must be a whole number \(or gpu\/auto\), got 'eight'/);
});

test('duplicate keys', () => {
  assertMalformed('a.yaml', 'num_processes: 8\nmixed_precision: fp16\nnum_processes: 4\n', /YAML: Map keys must be unique/);
  assertMalformed('ds.json', '{"train_batch_size": 8,\n "zero_optimization": {"stage": 1, "stage": 2}}', /JSON: duplicate key "stage"/);
});

test('syntax errors', () => {
  assertMalformed('ds.json', '{"train_batch_size": 8,,', /^JSON: /);
  assertMalformed('a.yaml', 'num_processes: 8\n  bad: indent: here\n', /^YAML: /);
  assertMalformed('t.py', 'import lightning as L\nL.Trainer(devices=8,, strategy=)\n', /syntax error inside the Trainer/);
});

test('the malformed range points into the file', () => {
  const text = '{"train_batch_size": "eight"}';
  const [f] = checkConfig('ds.json', text, undefined).findings;
  assert.equal(text.slice(f!.range.start, f!.range.end), '"eight"');
});

test('a malformed DeepSpeed count quotes at most 40 characters of the value', () => {
  const long = `"${'x'.repeat(60)}"`;
  assertMalformed('ds_config.json', `{ "train_micro_batch_size_per_gpu": ${long} }`, new RegExp(`must be a positive whole number or "auto", got "${'x'.repeat(39)}$`));
});

test('a YAML config that does not parse states no setup, for every reader, and its check says why: never a crash', () => {
  for (const [name, text] of [
    ['accelerate.yaml', 'distributed_type: MULTI_GPU\nnum_processes: [\n'],
    ['config.yaml', 'trainer:\n  devices: [\n'],
    ['recipe.yaml', 'model_name_or_path: x\nper_device_train_batch_size: {\n'],
  ] as const) {
    assert.ok(detectConfigFormats(name, text).length > 0, name);
    assert.deepEqual(readConfigSetups(name, text), [], name);
    assert.equal(resolveLaunchedModel(name, text, disk), undefined, `${name} names no model it can be read for`);
    const findings = checkConfig(name, text, undefined).findings;
    assert.ok(findings.some((f) => f.code === 'malformed-config' && f.severity === 'error'), `${name}: ${JSON.stringify(findings)}`);
  }
});
