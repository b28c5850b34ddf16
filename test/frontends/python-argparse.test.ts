/**
 * argparse read as the script's command line (frontends/python/argparseRuntime.ts): the defaults when the script is
 * run with no arguments, the arguments a launch script or the user gives otherwise, converted by `type=` as argparse
 * does, and a diagnostic that says which command line sized the model. Ground truth: the fixture's model built in
 * real torch with the same sizes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { NANOGPT, nanogptParams } from './nanogptTruth';

const dir = NANOGPT;
const file = join(dir, 'argparse_train.py');
const torchParams = nanogptParams;

before(async () => {
  await initFrontends();
});

const read = (options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')) => analyzeSource(file, text, options, { workspaceFolders: [dir] });

test('run with no arguments: every option at its default, a string default through type=, set_defaults, and a note saying so', async () => {
  const r = await read();
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.equal(model.completeness?.complete, true, JSON.stringify(model.completeness));
  assert.equal(model.totals.params, torchParams('n_layer=6, n_head=6, n_embd=384, block_size=256, bias=False'));
  const note = [...r.diagnostics, ...model.diagnostics].find((d) => d.code === 'script-arguments');
  assert.ok(note);
  assert.equal([note.line, note.severity].join(), '26,info');
  assert.match(note.message, /^`parser\.parse_args\(\)` is read as the script run with no arguments, each option at its default: n_layer=6, n_head=6, n_embd=384, bias=False, block_size=256, batch_size=32, compile=False, lr=0\.0003; a run that passes others/);
});

test('the run’s arguments size the model: --x v, --x=v, a flag, a user’s type function; an unknown option is said', async () => {
  const given = { words: ['--n-layer', '2', '--n_embd=128', '--n_head', '4', '--bias', 'yes', '--compile', '--no_such', '1'], source: 'run.sh' };
  const r = await read({ scriptArguments: given });
  const model = r.models.find((m) => m.name === 'model')!;
  assert.equal(model.totals.params, torchParams('n_layer=2, n_head=4, n_embd=128, block_size=256, bias=True'));
  // set_defaults' block_size is the run's length: the forward is read at it, and the plan's sequence says whose it is.
  assert.equal(model.sequence?.length, 256);
  assert.match(model.sequence!.source, /block_size's default 256 in the script/);
  const all = [...r.diagnostics, ...model.diagnostics];
  assert.match(all.find((d) => d.code === 'script-arguments')!.message, /with the arguments run\.sh gives \(--n-layer 2 --n_embd=128 .*\): n_layer=2, n_head=4, n_embd=128, bias=True, block_size=256, batch_size=32, compile=True/);
  assert.match(all.find((d) => d.code === 'script-arguments-unknown')!.message, /run\.sh passes --no_such, which this parser does not define/);
});

test('a shell variable, a required option not given and parse_known_args; arguments written in the code win', async () => {
  const text = readFileSync(file, 'utf8');
  const shell = await read({ scriptArguments: { words: ['--n_embd', '$EMBD'], source: 'run.sh' } });
  const unsized = shell.models.find((m) => m.name === 'model')?.completeness;
  assert.equal(unsized?.complete, false, 'n_embd is the shell’s: the model cannot be sized');
  // The reason names the cause, not only the embedding's size of 0 it leads to.
  assert.match(unsized!.reasons[0]!, /^nn\.Embedding is built with a size WAP does not know: \$EMBD is set by the shell when the script runs$/);
  const required = await read({}, text.replace("parser.add_argument('--batch_size', type=int, default=32)", "parser.add_argument('--data', required=True)\nparser.add_argument('--batch_size', type=int, default=32)"));
  assert.equal(required.models.find((m) => m.name === 'model')?.totals.params, torchParams('n_layer=6, n_head=6, n_embd=384, block_size=256, bias=False'), 'an option the model does not use does not matter');
  const known = await read({ scriptArguments: { words: ['--n-layer', '3', '--extra', 'x'], source: 'run.sh' } }, text.replace('args = parser.parse_args()', 'args, rest = parser.parse_known_args()'));
  assert.equal(known.models.find((m) => m.name === 'model')!.layers.filter((l) => /\.attn\.c_attn$/.test(l.name)).length, 3);
  assert.ok(![...known.diagnostics, ...known.models.flatMap((m) => m.diagnostics)].some((d) => d.code === 'script-arguments-unknown'), 'parse_known_args keeps unknown options');
  const inCode = await read({ scriptArguments: { words: ['--n-layer', '3'], source: 'run.sh' } }, text.replace('args = parser.parse_args()', "args = parser.parse_args(['--n-layer', '1'])"));
  assert.equal(inCode.models.find((m) => m.name === 'model')!.layers.filter((l) => /\.attn\.c_attn$/.test(l.name)).length, 1);
});
