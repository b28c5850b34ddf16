/**
 * Planner benchmarks (medians): VGG-16 on every n = 1..8, ResNet-50 on 16
 * GPUs, a synthetic 1,000-layer chain on 64 GPUs. Models come from the
 * hand-built fixtures (test/planner/fixtures.ts), which carry the same
 * per-layer workloads the core computes for torchvision's VGG-16/ResNet-50.
 */
import { parseClusterSpec, planModel, resolveCluster } from '../src/planner/index';
import type { AnalyzedModel } from '../src/core/ir';
import type { ClusterSpec } from '../src/planner/index';
import { alexnet, resnet50, syntheticChain, vgg16 } from '../test/planner/fixtures';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function h100Nodes(nodes: number): ClusterSpec {
  return parseClusterSpec({ name: `${nodes}x8 H100`, nodes, gpusPerNode: 8, gpu: { name: 'H100', tflops: 67, memoryGB: 80, memoryBandwidthGBs: 3350, powerW: 700, idlePowerW: 70 }, intraNode: { bandwidthGBs: 450, latencyUs: 3 }, interNode: { bandwidthGBs: 50, latencyUs: 5 } }, 'bench');
}

function time(model: AnalyzedModel, cluster: ClusterSpec, reps: number): { ms: number; gpus: number; sps: number } {
  const ms: number[] = [];
  let last;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    last = planModel(model, cluster, { batch: 256, objective: 'throughput', strategies: 'hybrid', optimizer: 'momentum' });
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), gpus: last!.feasible ? last!.plan.gpus : 0, sps: last!.feasible ? last!.plan.samplesPerSec : 0 };
}

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  const rows: Array<Record<string, string | number>> = [];
  const rssBefore = process.memoryUsage().rss;
  const cases: Array<[string, () => AnalyzedModel, ClusterSpec, number, number]> = [
    // What the language server does on every edit: a typical model on the default preset.
    ['AlexNet, every n = 1..4 (pcie4, LSP-typical)', alexnet, resolveCluster('pcie4', {}), 50, 9],
    ['VGG-16, every n = 1..8 (a100x8)', vgg16, resolveCluster('a100x8', {}), 50, 7],
    ['ResNet-50 on 16 GPUs (h100x16-2node)', () => resnet50(), resolveCluster('h100x16-2node', {}), 500, 5],
    ['1,000-layer chain on 64 GPUs (8 nodes × 8 H100)', () => syntheticChain(1000), h100Nodes(8), 3000, 3],
  ];
  for (const [name, make, cluster, target, reps] of cases) {
    const model = make();
    const r = time(model, cluster, reps);
    rows.push({ case: name, layers: model.layers.length, 'median ms': Math.round(r.ms * 10) / 10, 'target ms': target, ratio: Math.round((r.ms / target) * 100) / 100, 'chosen gpus': r.gpus, 'samples/s': Math.round(r.sps) });
  }
  const rssMB = Math.round(process.memoryUsage().rss / 1e6);
  rows.push({ case: 'RSS after all cases (MB, target ≤ 500)', layers: '', 'median ms': '', 'target ms': '', ratio: Math.round((rssMB / 500) * 100) / 100, 'chosen gpus': '', 'samples/s': `${rssMB} (before ${Math.round(rssBefore / 1e6)})` });
  return [{ title: 'planner (fixtures; medians)', rows }];
}
