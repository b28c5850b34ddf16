/**
 * One training iteration of a (non-pipelined) plan as tasks: forward in
 * topological order with layout changes and Megatron collectives, backward in
 * reverse order with gradient redistribution, gradient all-reduce in NCCL-style
 * buckets (reverse layer order, cut at a byte cap or a change of data group)
 * overlapping the remaining backward, then the optimizer update.
 */
import type { CostTables } from '../cost/tables';
import { allReduceMs } from '../cost/topology';
import { drain, type Steps } from '../steps';
import { Engine, gpuLanes, type SimRun } from './engine';

/** PyTorch DDP's default bucket_cap_mb. */
export const DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024;
/**
 * DDP caps the first bucket (the last layers' gradients, ready first) at
 * 1 MiB so that communication starts as early as possible
 * (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).
 */
export const DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024;

export interface IterationOptions {
  bucketBytes?: number;
  /** Cap of the first bucket; defaults to DDP's 1 MiB, or to bucketBytes when that is given and smaller. */
  firstBucketBytes?: number;
}

export function simulateIteration(t: CostTables, choice: ArrayLike<number>, opts: IterationOptions = {}): SimRun {
  return drain(simulateIterationSteps(t, choice, opts));
}

/** simulateIteration with the engine's checkpoints. */
export function* simulateIterationSteps(t: CostTables, choice: ArrayLike<number>, opts: IterationOptions = {}): Steps<SimRun> {
  const bucketCap = opts.bucketBytes ?? DEFAULT_BUCKET_BYTES;
  const firstCap = Math.min(bucketCap, opts.firstBucketBytes ?? DEFAULT_FIRST_BUCKET_BYTES);
  const eng = new Engine();
  const L = t.layers.length;
  const lanes = gpuLanes(t.devices);
  const fwdEnd = new Int32Array(L);
  const bwdEnd = new Int32Array(L);
  const bwdCompute = new Int32Array(L);
  const opt = (i: number) => t.options[i][choice[i]];
  const modelLane = (i: number) => t.modelGroupLink(opt(i).config).lane;
  const edgeLane = (from: number, to: number) => t.pairLink[t.outLayouts[from][choice[from]] * t.layouts.length + t.inLayouts[to][choice[to]]].lane;

  for (let i = 0; i < L; i++) {
    const deps: number[] = [];
    for (const e of t.inEdges[i]) {
      const from = t.edges[e].from;
      const [fwd] = t.edgeCostParts(e, choice[from], choice[i]);
      if (fwd > 0) {
        deps.push(eng.add({ kind: 'transfer', layer: t.layers[i].name, resources: [edgeLane(from, i)], devices: t.devices, durationMs: fwd, deps: [fwdEnd[from]], bytes: t.edges[e].bytes }));
      } else deps.push(fwdEnd[from]);
    }
    const o = opt(i);
    let last = eng.add({ kind: 'forward', layer: t.layers[i].name, resources: lanes, devices: t.devices, durationMs: o.forwardMs, deps });
    if (o.mpForwardMs > 0) last = eng.add({ kind: 'transfer', layer: t.layers[i].name, resources: [modelLane(i)], devices: t.devices, durationMs: o.mpForwardMs, deps: [last] });
    fwdEnd[i] = last;
  }
  const lossReady = L > 0 ? fwdEnd[L - 1] : -1;

  const bucketTasks: number[] = [];
  let bucket: { layers: number[]; bytes: number; key: string } | undefined;
  const flush = (): void => {
    if (!bucket || bucket.bytes <= 0) return;
    const c = opt(bucket.layers[0]).config;
    const link = t.dataGroupLink(c);
    bucketTasks.push(
      eng.add({
        kind: 'allreduce',
        layer: t.layers[bucket.layers[bucket.layers.length - 1]].name,
        resources: [link.lane],
        devices: t.devices,
        durationMs: allReduceMs(bucket.bytes, c.d, link),
        deps: bucket.layers.map((l) => bwdCompute[l]),
        bytes: bucket.bytes,
      }),
    );
    bucket = undefined;
  };

  for (let i = L - 1; i >= 0; i--) {
    const deps: number[] = [];
    for (const e of t.outEdges[i]) {
      const to = t.edges[e].to;
      const [, bwd] = t.edgeCostParts(e, choice[i], choice[to]);
      if (bwd > 0) {
        deps.push(eng.add({ kind: 'transfer', layer: t.layers[to].name, resources: [edgeLane(i, to)], devices: t.devices, durationMs: bwd, deps: [bwdEnd[to]], bytes: t.edges[e].bytes }));
      } else deps.push(bwdEnd[to]);
    }
    if (t.outEdges[i].length === 0 && lossReady >= 0) deps.push(lossReady);
    const o = opt(i);
    const comp = eng.add({ kind: 'backward', layer: t.layers[i].name, resources: lanes, devices: t.devices, durationMs: o.backwardMs, deps });
    bwdCompute[i] = comp;
    bwdEnd[i] = o.mpBackwardMs > 0 ? eng.add({ kind: 'transfer', layer: t.layers[i].name, resources: [modelLane(i)], devices: t.devices, durationMs: o.mpBackwardMs, deps: [comp] }) : comp;
    if (o.allreduceBytes > 0) {
      const key = `${o.config.d}x${o.config.k}`;
      if (bucket && bucket.key !== key) flush();
      bucket ??= { layers: [], bytes: 0, key };
      bucket.layers.push(i);
      bucket.bytes += o.allreduceBytes;
      if (bucket.bytes >= (bucketTasks.length === 0 ? firstCap : bucketCap)) flush();
    }
  }
  flush();

  let updateMs = 0;
  for (let i = 0; i < L; i++) updateMs += opt(i).updateMs;
  const allBwd = Array.from(bwdEnd);
  eng.add({ kind: 'update', layer: 'optimizer', resources: lanes, devices: t.devices, durationMs: updateMs, deps: [...allBwd, ...bucketTasks] });
  return yield* eng.runSteps();
}
