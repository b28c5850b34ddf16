/**
 * Acceptance corpus (issue 11): the Python frontend reads every
 * classification builder of the installed torchvision 0.14 from its own,
 * unmodified model files (imports followed through the interpreter's
 * site-packages), and each is compared with torch: parameter count and the
 * output shape of every leaf module call. Needs torch and torchvision in
 * /usr/bin/python3 (CI installs Debian's python3-torch and
 * python3-torchvision); without them the test fails and says so.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { corpusRows, firstReason, loadTruth, runCorpus, type BuilderOutcome } from './torchvisionCorpus';

/**
 * Issue #11's acceptance is 78 of 80. Reached: all 80 (regnet's numeric arrays, densenet's ModuleDict
 * blocks, shufflenet's x.size() reshapes and swin's windows folded into the batch, both read for the
 * assumed input, maxvit's einsum attention and gathered relative position bias, swin_v2's position-bias
 * MLP on a constant table). This floor guards what is reached: a construct that regresses shows here.
 */
const REQUIRED_EXACT = 80;
let outcomes: BuilderOutcome[] = [];

before(async () => {
  const { truth, dir } = loadTruth();
  outcomes = await runCorpus(truth, dir);
  const rows = corpusRows(outcomes);
  const exact = outcomes.filter((o) => o.exact).length;
  console.log(`torchvision ${truth.torchvision}: ${exact}/${outcomes.length} builders exact in params and leaf shapes`);
  for (const r of rows) console.log(Object.values(r).join(' | '));
});

test('the corpus is the 80 classification builders of torchvision.models', () => {
  assert.equal(outcomes.length, 80, `truth lists ${outcomes.length} builders`);
  for (const name of ['alexnet', 'resnet50', 'vit_h_14', 'convnext_large', 'efficientnet_v2_l', 'swin_v2_b', 'maxvit_t', 'regnet_y_128gf']) {
    assert.ok(outcomes.some((o) => o.builder === name), `${name} is in the corpus`);
  }
});

test('every builder that is not exact carries a warning naming what could not be read', () => {
  const silent = outcomes.filter((o) => !o.exact && !o.diagnostics.some((d) => d.severity !== 'info'));
  assert.deepEqual(
    silent.map((o) => `${o.builder}: params ${o.params} vs ${o.truthParams}, ${o.shapeMismatches.length} shape diffs (${o.shapeMismatches[0] ?? ''})`),
    [],
    'silently wrong builders',
  );
});

test(`at least ${REQUIRED_EXACT} of the 80 builders are exact in params and every leaf shape`, () => {
  const wrong = outcomes.filter((o) => !o.exact);
  assert.ok(
    outcomes.length - wrong.length >= REQUIRED_EXACT,
    `${outcomes.length - wrong.length}/${outcomes.length} exact; wrong:\n${wrong.map((o) => `  ${o.builder}: ${firstReason(o)}`).join('\n')}`,
  );
});
