/**
 * What every subcommand shares: --help, unknown flags, malformed values,
 * missing files and model choice all answer the same way, in-process and
 * through the real `wap` entry point.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commands } from '../../src/cli/commands/registry';
import { CliError } from '../../src/cli/cliError';
import { parseShapeFlag, positiveInt } from '../../src/cli/args';
import { capture, root, TINY_TORCH } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tiny = join(dir, 'tiny.py');
writeFileSync(tiny, TINY_TORCH);
const missing = join(dir, 'missing.py');

/** The options each command's help must list (and parseArgs must accept). */
const OPTIONS: Record<string, string[]> = {
  analyze: ['--model', '--input', '--seq-len', '--batch', '--json'],
  plan: ['--model', '--input', '--seq-len', '--batch', '--gpus', '--max-gpus', '--cluster', '--objective', '--strategies', '--optimizer', '--profile', '--measure', '--backend', '--cache', '--repetitions', '--seq-lengths', '--batching', '--pad-multiple', '--json', '--trace', '--html'],
  profile: ['--model', '--input', '--seq-len', '--batch', '--backend', '--out', '--cache', '--repetitions', '--fidelity'],
  config: ['--model', '--model-name', '--input', '--seq-len', '--batch', '--gpus', '--max-gpus', '--cluster', '--objective', '--strategies', '--optimizer', '--fix'],
  export: ['--format', '--out', '--model-name', '--input', '--seq-len', '--batch', '--gpus', '--max-gpus', '--cluster', '--objective', '--strategies', '--optimizer'],
  validate: ['--devices', '--model', '--input', '--batch', '--python', '--optimizer', '--steps', '--timeout', '--cache', '--save-profile', '--json'],
};

/** Rejects with a one-line CliError (exit 2) whose message matches. */
async function failsWith(run: Promise<number>, message: RegExp): Promise<void> {
  await assert.rejects(run, (e: unknown) => {
    assert.ok(e instanceof CliError, `not a CliError: ${String(e)}`);
    assert.equal(e.exitCode, 2);
    assert.ok(!e.message.includes('\n'), `more than one line: ${e.message}`);
    assert.match(e.message, message);
    return true;
  });
}

test('every registered command is covered here', () => {
  assert.deepEqual(Object.keys(commands).sort(), Object.keys(OPTIONS).sort());
});

for (const [name, options] of Object.entries(OPTIONS)) {
  test(`wap ${name} --help lists its options and returns 0; -h is the same`, async () => {
    const r = await capture(() => commands[name]!.run(['--help']));
    assert.equal(r.code, 0);
    assert.match(r.out, new RegExp(`^Usage: wap ${name} `));
    for (const o of options) assert.match(r.out, new RegExp(`^\\s+${o}\\b`, 'm'), `${name} --help lacks ${o}`);
    assert.equal((await capture(() => commands[name]!.run(['-h']))).out, r.out);
  });

  test(`wap ${name}: an unknown flag is a one-line exit-2 error naming it`, async () => {
    await failsWith(commands[name]!.run([tiny, '--frobnicate']), new RegExp(`^${name}: Unknown option '--frobnicate' \\(see wap ${name} --help\\)$`));
  });
}

test('a flag that needs a value and gets none names the flag', async () => {
  await failsWith(commands.plan!.run([tiny, '--batch']), /^plan: Option '--batch <value>' argument missing/);
});

test('malformed numbers and shapes name the flag and the value', async () => {
  await failsWith(commands.plan!.run([tiny, '--gpus', '0']), /^--gpus expects a positive integer, got '0'$/);
  await failsWith(commands.export!.run([tiny, '--format', 'deepspeed', '--max-gpus', 'two']), /^--max-gpus expects a positive integer, got 'two'$/);
  await failsWith(commands.profile!.run([tiny, '--repetitions', '0']), /^--repetitions expects a positive integer, got '0'$/);
  // parseArgs itself refuses a value that looks like a flag.
  await failsWith(commands.profile!.run([tiny, '--repetitions', '-1']), /^profile: Option '--repetitions' argument is ambiguous \(see wap profile --help\)$/);
  await failsWith(commands.plan!.run([tiny, '--strategies', 'zero']), /^--strategies must be one of dp, hybrid, all, got 'zero'$/);
  await failsWith(commands.analyze!.run([tiny, '--input', '3,,32']), /^--input expects positive integers separated by commas/);
  assert.deepEqual(parseShapeFlag(' 3, 32 ,32'), [3, 32, 32]);
  assert.equal(positiveInt('batch', undefined), undefined);
  assert.equal(positiveInt('batch', '12'), 12);
});

test('a missing model file reads the same in every command that takes one', async () => {
  const message = new RegExp(`^cannot read '${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}' \\(ENOENT\\)$`);
  await failsWith(commands.analyze!.run([missing]), message);
  await failsWith(commands.plan!.run([missing]), message);
  await failsWith(commands.profile!.run([missing, '--backend', 'wasm']), message);
  await failsWith(commands.export!.run([missing, '--format', 'deepspeed']), message);
  await failsWith(commands.plan!.run([join(dir, 'notes.txt')]), /is not a model file: expected a \.py, \.ts\/\.js or \.json file$/);
  await failsWith(commands.plan!.run([]), /^plan needs a model file/);
  await failsWith(commands.plan!.run([tiny, tiny]), /^plan expects exactly one model file, got 2/);
});

test('--model NAME picks a model in analyze and plan; --model-name in export; unknown names list the models', async () => {
  const a = await capture(() => commands.analyze!.run([tiny, '--model', 'SmallMlp', '--input', '4', '--json']));
  assert.equal(a.code, 0, a.err);
  assert.deepEqual(JSON.parse(a.out).models.map((m: { name: string }) => m.name), ['SmallMlp']);
  const all = await capture(() => commands.analyze!.run([tiny, '--input', '3,32,32', '--json']));
  assert.deepEqual(JSON.parse(all.out).models.map((m: { name: string }) => m.name), ['TinyNet', 'SmallMlp']);

  const p = await capture(() => commands.plan!.run([tiny, '--model', 'SmallMlp', '--input', '4', '--json', '--gpus', '1']));
  assert.equal(p.code, 0, p.err);
  assert.equal(JSON.parse(p.out).model, 'SmallMlp');

  const unknown = /^no model named 'Nope' in '.*tiny\.py' \(found: TinyNet, SmallMlp\)$/;
  await failsWith(commands.analyze!.run([tiny, '--model', 'Nope']), unknown);
  await failsWith(commands.plan!.run([tiny, '--model', 'Nope']), unknown);
  await failsWith(commands.profile!.run([tiny, '--model', 'Nope', '--backend', 'wasm']), unknown);
  await failsWith(commands.export!.run([tiny, '--model-name', 'Nope', '--format', 'deepspeed']), unknown);
});

test('plan: --measure and --profile exclude each other; profiler flags need --measure', async () => {
  await failsWith(commands.plan!.run([tiny, '--measure', '--profile', join(dir, 'p.json')]), /^--measure and --profile both supply layer times/);
  await failsWith(commands.plan!.run([tiny, '--backend', 'wasm']), /^--backend applies only with --measure$/);
  await failsWith(commands.plan!.run([tiny, '--measure', '--backend', 'tpu']), /^--backend must be one of auto, wasm, cpu, tfjs-node, tfjs-node-gpu, torch, got 'tpu'$/);
});

test('the real entry point: --help exits 0, an unknown flag exits 2 with one line on stderr', () => {
  const wap = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  const help = wap('export', '--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: wap export /);
  const bad = wap('profile', tiny, '--frobnicate');
  assert.equal(bad.status, 2);
  assert.equal(bad.stdout, '');
  assert.equal(bad.stderr, "wap: profile: Unknown option '--frobnicate' (see wap profile --help)\n");
});
