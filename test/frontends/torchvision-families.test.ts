/**
 * torchvision's segmentation and video builders, read from their own files as
 * the classification corpus is (torchvisionCorpus.ts), against torch's counts
 * and leaf shapes. They use what classification models do not: a backbone cut
 * by IntermediateLayerGetter (an nn.ModuleDict subclass built from an
 * OrderedDict, `del` of each found layer, `for name, module in self.items()`),
 * an nn.Sequential subclass iterated as `for mod in self`, heads upsampled back
 * to `x.shape[-2:]`, and 3D convolutions over clips. Before, FCN and DeepLabV3
 * read as 0 parameters with no word that anything was missing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { corpusRows, firstReason, loadTruth, runCorpus, type BuilderOutcome, type Family } from './torchvisionCorpus';

async function corpus(family: Family): Promise<BuilderOutcome[]> {
  const { truth, dir } = loadTruth(family);
  const outcomes = await runCorpus(truth, dir);
  console.log(`torchvision ${truth.torchvision} ${family}: ${outcomes.filter((o) => o.exact).length}/${outcomes.length} exact`);
  for (const r of corpusRows(outcomes)) console.log(Object.values(r).join(' | '));
  return outcomes;
}

const notExact = (outcomes: BuilderOutcome[]) => outcomes.filter((o) => !o.exact).map((o) => `${o.builder}: params ${o.params} vs ${o.truthParams}; ${o.shapeMismatches[0] ?? firstReason(o)}`);

/** A builder that is not exact names what it could not read (a warning), or it is a silent wrong answer. */
const silent = (outcomes: BuilderOutcome[]) => outcomes.filter((o) => !o.exact && !o.diagnostics.some((d) => d.severity !== 'info')).map((o) => o.builder);

test('segmentation: all six builders (FCN, DeepLabV3, LR-ASPP) exact in params and every leaf shape', async () => {
  const outcomes = await corpus('segmentation');
  assert.deepEqual(outcomes.map((o) => o.builder).sort(), ['deeplabv3_mobilenet_v3_large', 'deeplabv3_resnet101', 'deeplabv3_resnet50', 'fcn_resnet101', 'fcn_resnet50', 'lraspp_mobilenet_v3_large']);
  assert.deepEqual(notExact(outcomes), []);
});

test('video: the ResNet-3D family and S3D exact; MViT, which WAP cannot read yet, says so', async () => {
  const outcomes = await corpus('video');
  assert.deepEqual(silent(outcomes), [], 'silently wrong builders');
  const exact = outcomes.filter((o) => o.exact).map((o) => o.builder).sort();
  assert.deepEqual(exact, ['mc3_18', 'r2plus1d_18', 'r3d_18', 's3d'], notExact(outcomes).join('\n'));
});
