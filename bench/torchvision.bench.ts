/**
 * The torchvision corpus as tables: each builder of the installed torchvision's
 * classification, segmentation and video families read from its own files,
 * params and leaf shapes against torch's (see test/frontends/torchvisionCorpus.ts),
 * plus how long the frontend took per model file (cold: the first read also
 * evaluates the imported torchvision.ops modules).
 */
import type { BenchTable } from './run';
import { corpusRows, loadTruth, runCorpus, type Family } from '../test/frontends/torchvisionCorpus';

export default async function bench(): Promise<BenchTable[]> {
  const tables: BenchTable[] = [];
  const files = new Map<string, number>();
  for (const family of ['classification', 'segmentation', 'video'] as Family[]) {
    const { truth, dir } = loadTruth(family);
    const outcomes = await runCorpus(truth, dir);
    const exact = outcomes.filter((o) => o.exact).length;
    for (const o of outcomes) files.set(o.file, o.millis);
    tables.push({ title: `torchvision ${truth.torchvision} ${family}: ${exact}/${outcomes.length} builders exact (params and every leaf shape vs torch)`, rows: corpusRows(outcomes) });
  }
  tables.push({ title: 'Frontend time per torchvision model file (ms, first read)', rows: [...files].map(([file, ms]) => ({ file, ms })) });
  return tables;
}
