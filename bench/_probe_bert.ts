import { analyzeSource } from '../src/frontends/index';
import { parseClusterSpec, planModel, resolveCluster } from '../src/planner/index';
import type { PlanOptions, Precision } from '../src/protocol/plan';
async function main() {
  const src = ['from transformers import BertConfig, BertForPreTraining',
    'config = BertConfig(vocab_size=30528, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, max_position_embeddings=512, type_vocab_size=2)',
    'model = BertForPreTraining(config)', ''].join('\n');
  const seq = Number(process.argv[2] ?? 128), mb = Number(process.argv[3] ?? 32), precision = (process.argv[4] ?? 'fp32') as Precision, cl = process.argv[5] ?? 'dgx1-v100';
  const r = await analyzeSource('bench/bert_large.py', src, { sequenceLength: seq });
  const model = r.models.find((m) => m.name === 'model')!;
  const base = resolveCluster(cl);
  const { index: _i, node: _n, ...gpu } = base.gpus[0];
  const cluster = parseClusterSpec({ name: 'x', nodes: 1, gpusPerNode: 8, gpu: { ...gpu, memoryGB: 80 }, intraNode: base.intraNode, interNode: base.interNode }, 'probe');
  const opts: PlanOptions = { batch: mb * 4, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision, precisionSource: 'bench', attentionKernel: 'unfused', pins: { zeroStage: 0, recompute: 'none', microBatch: mb } };
  const out = planModel(model, cluster, opts);
  if (!out.feasible) { console.log(out.reason); return; }
  console.log('seq/s', out.plan.samplesPerSec.toFixed(1), 'step ms', out.plan.stepTimeMs.toFixed(1));
  const byType = new Map<string, number>();
  for (const l of out.plan.layers) byType.set(l.type, (byType.get(l.type) ?? 0) + l.forwardMs + l.backwardMs);
  const total = [...byType.values()].reduce((a, b) => a + b, 0);
  for (const [t, ms] of [...byType].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(t.padEnd(40), (ms / 4).toFixed(2), 'ms/mb', ((100 * ms) / total).toFixed(1) + '%');
  console.log('layers total per micro-batch', (total / 4).toFixed(1));
}
void main();
