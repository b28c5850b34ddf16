/**
 * Adding a keyword argument to a call in a training script (a Lightning
 * Trainer's `strategy=`, `precision=`) through the syntax tree: inline for
 * one-line calls, on its own line with the arguments' indentation when they
 * are one per line, and never inside or after a comment.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { argsLayout, callArgs, findCalls, initPythonConfigs, insertKeyword, withPythonTree } from '../../src/configs/python';
import { applyTextEdits } from '../../src/configs/edits';

before(() => initPythonConfigs());

/** `text` with `name=value` added to its first Trainer(...) call. */
function addKeyword(text: string, name: string, value: string): string {
  const edits = withPythonTree(text, (root) => {
    const call = findCalls(root, 'Trainer')[0];
    assert.ok(call, 'a Trainer call');
    const args = callArgs(call);
    assert.ok(args);
    return insertKeyword(text, argsLayout(args), name, value);
  });
  return applyTextEdits(text, edits);
}

test('calls are found by their last name, plain or dotted, and by nothing else', () => {
  const text = 'x = foo.bar(1)\nt = L.Trainer(devices=8)\nu = Trainer()\nv = Trainer.from_argparse_args(a)\n';
  const found = withPythonTree(text, (root) => findCalls(root, 'Trainer').map((c) => c.text));
  assert.deepEqual(found, ['L.Trainer(devices=8)', 'Trainer()']);
});

test('one-line calls get the keyword inline, empty calls get it alone', () => {
  assert.equal(addKeyword('t = Trainer(devices=8)\n', 'precision', '"bf16-mixed"'), 't = Trainer(devices=8, precision="bf16-mixed")\n');
  assert.equal(addKeyword('t = Trainer()\n', 'devices', '4'), 't = Trainer(devices=4)\n');
  assert.equal(addKeyword('t = Trainer(devices=8, max_epochs=3, logger=False)\n', 'precision', '16'), 't = Trainer(devices=8, max_epochs=3, logger=False, precision=16)\n');
});

test('one argument per line: a new line with their indentation, after the last argument and its comment', () => {
  const text = 't = Trainer(\n    devices=8,  # one per GPU\n    max_epochs=3,  # short run\n)\n';
  assert.equal(addKeyword(text, 'strategy', '"fsdp"'), 't = Trainer(\n    devices=8,  # one per GPU\n    max_epochs=3,  # short run\n    strategy="fsdp",\n)\n');
  // A comment after the last argument is not an argument: the keyword goes after the argument, not into the comment.
  const noComma = 't = Trainer(devices=8, max_epochs=3  # short run\n)\n';
  assert.equal(addKeyword(noComma, 'strategy', '"fsdp"'), 't = Trainer(devices=8, max_epochs=3, strategy="fsdp"  # short run\n)\n');
});

test('one argument per line with the closing parenthesis on the last one: the keyword goes after its comma, on that line', () => {
  assert.equal(addKeyword('t = Trainer(\n    devices=8,\n    max_epochs=3,)\n', 'strategy', '"fsdp"'), 't = Trainer(\n    devices=8,\n    max_epochs=3, strategy="fsdp",)\n');
});
