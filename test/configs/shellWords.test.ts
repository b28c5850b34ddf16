/**
 * The launch-line tokenizer against shell (POSIX sh, "Token Recognition") and
 * GNU make semantics: words keep their quotes and exact spans, commands split
 * at ; & | ( ) and unescaped newlines, a backslash-newline continues the line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignmentValue, findAssignments, isMakefileName, resolveReference, splitCommands, unquote } from '../../src/configs/shellWords';

const words = (text: string): string[][] => splitCommands(text).map((c) => c.map((w) => w.raw));
/** Every word's span must slice back to its raw text. */
const spansHold = (text: string): void => {
  for (const c of splitCommands(text)) for (const w of c) assert.equal(text.slice(w.start, w.end), w.raw, `span of ${w.raw}`);
};

test('words and commands: separators, comments, continuations', () => {
  const text = 'A=1 torchrun --nproc_per_node=8 train.py # eight GPUs\nnext  cmd;a&&b || c | d & e\n(sub)';
  assert.deepEqual(words(text), [['A=1', 'torchrun', '--nproc_per_node=8', 'train.py'], ['next', 'cmd'], ['a'], ['b'], ['c'], ['d'], ['e'], ['sub']]);
  spansHold(text);
  // A backslash-newline (LF or CRLF) continues the command; the word before it ends there.
  assert.deepEqual(words('torchrun \\\n  --nnodes 2 \\\r\n  train.py\nx'), [['torchrun', '--nnodes', '2', 'train.py'], ['x']]);
  assert.deepEqual(words('a\\\nb'), [['a', 'b']]);
  // An escaped character is part of the word (an escaped space does not split it).
  assert.deepEqual(words('echo a\\ b c'), [['echo', 'a\\ b', 'c']]);
  assert.deepEqual(words('a\\ b c'), [['a\\ b', 'c']], 'also in the text’s first word');
  // '#' inside a word is not a comment; at a word's start it is.
  assert.deepEqual(words('url=a#b #c d\ne'), [['url=a#b'], ['e']]);
  assert.deepEqual(words('# only a comment'), []);
  assert.deepEqual(words('\t x\t'), [['x']]);
});

test('quotes and expansions are single words, with nested quotes and brackets', () => {
  const text = `python -c 'a b; c' "x \\" y" \`w h\` $(echo "(" ')') \${N:-8} $HOME/x`;
  assert.deepEqual(words(text), [['python', '-c', "'a b; c'", '"x \\" y"', '`w h`', `$(echo "(" ')')`, '${N:-8}', '$HOME/x']]);
  spansHold(text);
  // Nested $( ( ) ) balances; a quote touching a word joins it.
  assert.deepEqual(words('x=$(a $(b) c) --k="v w"'), [['x=$(a $(b) c)', '--k="v w"']]);
  // Unterminated quotes and expansions run to the end of the text instead of looping.
  assert.deepEqual(words("a 'bc"), [['a', "'bc"]]);
  assert.deepEqual(words('a "bc'), [['a', '"bc']]);
  assert.deepEqual(words('a $(bc'), [['a', '$(bc']]);
  // ${ stops at the end of its line.
  assert.deepEqual(words('a ${bc\nd'), [['a', '${bc'], ['d']]);
});

test('unquote strips one level of matching quotes and reports the inner span', () => {
  assert.deepEqual(unquote('"8"', 10), { value: '8', start: 11, end: 12 });
  assert.deepEqual(unquote("'a b'", 0), { value: 'a b', start: 1, end: 4 });
  assert.deepEqual(unquote('8', 5), { value: '8', start: 5, end: 6 });
  assert.deepEqual(unquote('"8\'', 0), { value: '"8\'', start: 0, end: 3 });
  assert.deepEqual(unquote('"', 0), { value: '"', start: 0, end: 1 });
  assert.deepEqual(unquote('""', 0), { value: '', start: 1, end: 1 });
});

test('assignments: leading NAME=value words, export prefixes, Makefile := ?= = (not +=)', () => {
  const w = { raw: 'NGPU="8"', start: 4, end: 12 };
  assert.deepEqual(assignmentValue(w), { name: 'NGPU', value: '8', start: 10, end: 11 });
  assert.equal(assignmentValue(w, 'OTHER'), undefined);
  assert.equal(assignmentValue({ raw: '--n=8', start: 0, end: 5 }), undefined);
  const sh = 'export NGPU=8 NODES=2\nCUDA_VISIBLE_DEVICES=0,1 torchrun X=3\n';
  const found = findAssignments(sh, splitCommands(sh), false);
  // X=3 follows the command name: an argument, not an assignment.
  assert.deepEqual(found.map((a) => [a.name, a.value, sh.slice(a.start, a.end)]), [['NGPU', '8', '8'], ['NODES', '2', '2'], ['CUDA_VISIBLE_DEVICES', '0,1', '0,1']]);
  const mk = 'NGPU := 8\nNODES ?= 2 # two\nBS = "16"\nFLAGS += -x\nexport LR=0.1\n';
  const made = findAssignments(mk, splitCommands(mk), true);
  assert.deepEqual(made.map((a) => [a.name, a.value, mk.slice(a.start, a.end)]), [['LR', '0.1', '0.1'], ['NGPU', '8', '8'], ['NODES', '2', '2'], ['BS', '16', '16']]);
  // The same file read as a shell script has only the export.
  assert.deepEqual(findAssignments(mk, splitCommands(mk), false).map((a) => a.name), ['LR']);
});

test('references resolve to the one place the value is written', () => {
  const text = 'NGPU=8\nDUP=1\nDUP=2\nALIAS=$NGPU\nSELF=${SELF:-4}\n';
  const asg = findAssignments(text, splitCommands(text), false);
  const at = (raw: string) => resolveReference(raw, 100, asg);
  for (const raw of ['$NGPU', '${NGPU}', '$(NGPU)', '${NGPU:-2}', '$ALIAS']) {
    const r = at(raw)!;
    assert.deepEqual([r.value, text.slice(r.start, r.end)], ['8', '8'], raw);
  }
  assert.equal(at('$DUP'), undefined, 'assigned twice');
  assert.equal(at('$MISSING'), undefined, 'never assigned, no default');
  assert.equal(at('$NGPU/2'), undefined, 'computed');
  // An unassigned ${X:-16} or ${X-16}: the default's own span in the reference.
  assert.deepEqual(at('${X:-16}'), { value: '16', start: 105, end: 107, defaultOf: '${X:-16}' });
  assert.deepEqual(at('${X-16}'), { value: '16', start: 104, end: 106, defaultOf: '${X-16}' });
  // SELF=${SELF:-4}: the default 4 inside the assignment is what counts.
  const self = at('$SELF')!;
  assert.equal(self.value, '4');
  assert.equal(text.slice(self.start, self.end), '4');
});

test('Makefile names', () => {
  for (const f of ['Makefile', 'makefile', 'GNUmakefile', 'src/train.mk', 'C:\\x\\Makefile', 'a.make']) assert.ok(isMakefileName(f), f);
  for (const f of ['Makefile.py', 'train.sh', 'mymakefile']) assert.ok(!isMakefileName(f), f);
});

test('expansions: adjacent ${A}${B} is one word, a ${…} default may hold spaces, a $( … ) may span lines', () => {
  assert.deepEqual(words('run ${A}${B} --tp 4\n'), [['run', '${A}${B}', '--tp', '4']]);
  assert.deepEqual(words('run ${TP:-4 2} --pp 2'), [['run', '${TP:-4 2}', '--pp', '2']]);
  const multiLine = 'GPUS=$(nvidia-smi --list-gpus |\n  wc -l)\ntorchrun --nproc_per_node $GPUS train.py';
  assert.deepEqual(words(multiLine), [['GPUS=$(nvidia-smi --list-gpus |\n  wc -l)'], ['torchrun', '--nproc_per_node', '$GPUS', 'train.py']]);
  spansHold(multiLine);
  // A backslash before any other character escapes that character only: the newline after it still ends the command.
  assert.deepEqual(words('echo a\\$\nrun b'), [['echo', 'a\\$'], ['run', 'b']]);
});

test('a chain of references is followed three hops; deeper, the value is not guessed', () => {
  const text = 'A=$B\nB=$C\nC=$D\nD=8\nP=$Q\nQ=$R\nR=$S\nS=$T\nT=8\n';
  const asg = findAssignments(text, splitCommands(text), false);
  assert.equal(resolveReference('$A', 0, asg)?.value, '8');
  assert.equal(resolveReference('$P', 0, asg)?.value, '$T', 'four hops: the fourth assignment is returned as written');
});
