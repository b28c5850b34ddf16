/**
 * The torchvision corpus as a table: each classification builder of the
 * installed torchvision read from its own files, params and leaf shapes
 * against torch's (see test/frontends/torchvisionCorpus.ts), plus how long the
 * frontend took per model file (cold: the first read also evaluates the
 * imported torchvision.ops modules).
 */
import type { BenchTable } from './run';
import { corpusRows, loadTruth, runCorpus } from '../test/frontends/torchvisionCorpus';

export default async function bench(): Promise<BenchTable[]> {
  const { truth, dir } = loadTruth();
  const outcomes = await runCorpus(truth, dir);
  const exact = outcomes.filter((o) => o.exact).length;
  const files = new Map<string, number>();
  for (const o of outcomes) files.set(o.file, o.millis);
  return [
    { title: `torchvision ${truth.torchvision} corpus: ${exact}/${outcomes.length} builders exact (params and every leaf shape vs torch)`, rows: corpusRows(outcomes) },
    { title: 'Frontend time per torchvision model file (ms, first read)', rows: [...files].map(([file, ms]) => ({ file, ms })) },
  ];
}
