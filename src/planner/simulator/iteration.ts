/**
 * One training iteration of a (non-pipelined) plan as tasks: forward in
 * topological order with layout changes and Megatron collectives, backward in
 * reverse order with gradient redistribution, gradient all-reduce in NCCL-style
 * buckets (reverse layer order, cut at a byte cap or a change of data group)
 * overlapping the remaining backward (a reduce-scatter under ZeRO), then the
 * optimizer update; ZeRO-1/2 then all-gather the updated weights (or, as
 * FSDP and Megatron's --overlap-param-gather do, gather them bucket by bucket
 * in the next forward, prefetched as ZeRO-3's gathers are). Under
 * offload each layer's gradients go down to host memory after its backward,
 * and under parameter offload its weights come up before its forward and its
 * backward, on the GPU's own PCIe link (HOST_LANE), beside the collectives.
 */
import type { CostTables } from '../cost/tables';
import { allGatherMs, reduceScatterMs } from '../cost/shardedCollectives';
import { allReduceMs } from '../cost/topology';
import { drain, type Steps } from '../steps';
import { Engine, gpuLanes, type SimRun } from './engine';
import { accumulatesUnsharded, allReducesEachMicroStep, gathersInForward, syncsSerially } from '../collectiveTiming';

/** PyTorch DDP's default bucket_cap_mb. */
export const DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024;
/**
 * DDP caps the first bucket (the last layers' gradients, ready first) at
 * 1 MiB so that communication starts as early as possible
 * (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).
 */
export const DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024;

/** The host↔GPU link parameter offload copies over: each GPU's own PCIe lanes, one lane standing for all of them. */
export const HOST_LANE = 'link:host';

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
  const opt = (i: number) => t.options[i][choice[i]];
  const modelLane = (i: number) => t.modelGroupLink(opt(i).config).lane;
  const edgeLane = (from: number, to: number) => t.pairLink[t.outLayouts[from][choice[from]] * t.layouts.length + t.inLayouts[to][choice[to]]].lane;
  const A = Math.max(1, t.setup.microSteps);
  const zero3 = (i: number) => opt(i).gatherMs > 0;
  // A layer whose ZeRO state is sharded (ZeRO ≥ 1 over a data group of 2 or more) reduce-scatters its gradients.
  const sharded = (i: number) => t.setup.zeroStage >= 1 && opt(i).config.d > 1;
  // ZeRO-2/3 reduce their gradient shards on every micro-step; DP and ZeRO-1 once per iteration, as ZeRO-2/3 under
  // FSDP's no_sync (setup.unshardedAccumulationStages), whose earlier micro-steps keep the full gradients unreduced.
  const unsharded = accumulatesUnsharded(t.setup.unshardedAccumulationStages, t.setup.zeroStage, A);
  const syncEveryMicroStep = t.setup.zeroStage >= 2 && !unsharded;
  // DDP without no_sync (setup.allReduceEachMicroStepStages): every micro-step all-reduces its own buckets beside its
  // own backward, so each is a pass of its own; under ZeRO-1 the last one's sync is the sharded one.
  const allReduceEach = allReducesEachMicroStep(t.setup.allReduceEachMicroStepStages, t.setup.zeroStage, A);
  const gatherInForward = gathersInForward(t.setup.forwardGatherStages, t.setup.zeroStage);
  // A framework that syncs with nothing beside it (DeepSpeed without overlap): each bucket holds the GPUs' compute
  // stream too, so the backward waits for it, as a collective on the default stream makes it.
  const syncLanes = (lane: string): string[] => (syncsSerially(t.setup.serialSyncStages, t.setup.zeroStage) ? [lane, ...lanes] : [lane]);

  /**
   * One forward+backward over `share` of the iteration's samples: all A micro-steps at once when A = 1, else the
   * first A−1 micro-steps as one pass (`earlier`) and the last one, whose gradient sync is what overlaps backward
   * (or, all-reducing each micro-step, one pass per micro-step). `allReduceOnly`: DDP's all-reduce even where the
   * ZeRO state is sharded (ZeroRedundancyOptimizer's earlier micro-steps).
   */
  // The gradient syncs of the pass last built, which the next micro-step waits for when each micro-step syncs.
  let lastPassSyncs: number[] = [];
  const pass = (share: number, label: string, microBatch: number | undefined, after: number[], syncGradients: boolean, gatherUpdated: boolean, allReduceOnly = false): number[] => {
    const fwdEnd = new Int32Array(L);
    const fwdStart: number[] = new Array(L).fill(-1);
    const bwdEnd = new Int32Array(L);
    const bwdCompute = new Int32Array(L);
    const name = (i: number) => t.layers[i].name + label;
    const mb = microBatch === undefined ? {} : { microBatch };
    const updated = gatherUpdated ? updatedWeightBuckets(t, choice, bucketCap) : undefined;
    const gatherFor = (i: number, deps: number[]): number | undefined => {
      const o = opt(i);
      // Offloaded weights come up from host memory first; ZeRO-3 then all-gathers the shards.
      if (o.hostUploadMs > 0) {
        const shards = zero3(i) ? t.shardGroup(o.config).shards : 1;
        deps = [eng.add({ kind: 'transfer', layer: `${name(i)} weights from CPU`, resources: [HOST_LANE], devices: t.devices, durationMs: o.hostUploadMs * share, deps, bytes: o.gatherBytes / shards, ...mb })];
      }
      if (!zero3(i)) return o.hostUploadMs > 0 ? deps[0] : undefined;
      const sg = t.shardGroup(o.config);
      return eng.add({ kind: 'allgather', layer: name(i), resources: [sg.shardLink.lane], devices: t.devices, durationMs: o.gatherMs * share, deps, bytes: o.gatherBytes, ...mb });
    };
    for (let i = 0; i < L; i++) {
      const deps: number[] = [...after];
      for (const e of t.inEdges[i]) {
        const from = t.edges[e].from;
        const [fwd] = t.edgeCostParts(e, choice[from], choice[i]);
        if (fwd > 0) {
          deps.push(eng.add({ kind: 'transfer', layer: name(i), resources: [edgeLane(from, i)], devices: t.devices, durationMs: fwd * share, deps: [fwdEnd[from]], bytes: t.edges[e].bytes * share, ...mb }));
        } else deps.push(fwdEnd[from]);
      }
      // FSDP prefetches the next unit's parameters while this one computes: at most two gathers ahead.
      const g = gatherFor(i, i >= 2 ? [fwdEnd[i - 2]] : [...after]);
      if (g !== undefined) deps.push(g);
      const b = updated ? updated.bucketOf[i] : -1;
      if (updated && b >= 0) {
        if (updated.firstLayer[b] === i) {
          // Bucket b is gathered while bucket b−1 computes: at most two in flight, as the units' gathers above.
          const prefetch = b >= 2 ? [fwdEnd[updated.firstLayer[b - 1] - 1]] : [...after];
          const sg = t.shardGroup(opt(i).config);
          updated.task[b] = eng.add({ kind: 'allgather', layer: `${name(i)} and on: updated weights (ZeRO-${t.setup.zeroStage})`, resources: [sg.shardLink.lane], devices: t.devices, durationMs: allGatherMs(updated.bytes[b], sg.shards, sg.shardLink), deps: prefetch, bytes: updated.bytes[b], ...mb });
        }
        deps.push(updated.task[b]);
      }
      const o = opt(i);
      let last = eng.add({ kind: 'forward', layer: name(i), resources: lanes, devices: t.devices, durationMs: o.forwardMs * share, deps, ...mb });
      fwdStart[i] = last;
      if (o.mpForwardMs > 0) last = eng.add({ kind: 'transfer', layer: name(i), resources: [modelLane(i)], devices: t.devices, durationMs: o.mpForwardMs * share, deps: [last], ...mb });
      fwdEnd[i] = last;
    }
    const lossReady = L > 0 ? fwdEnd[L - 1] : -1;

    const bucketTasks: number[] = [];
    const downloads: number[] = [];
    let bucket: { layers: number[]; bytes: number; key: string } | undefined;
    const flush = (): void => {
      if (!bucket || bucket.bytes <= 0) return;
      const c = opt(bucket.layers[0]).config;
      const layer = name(bucket.layers[bucket.layers.length - 1]);
      const deps = bucket.layers.map((l) => bwdCompute[l]);
      const syncs = syncEveryMicroStep ? share * A : 1;
      if (sharded(bucket.layers[0]) && !allReduceOnly) {
        const sg = t.shardGroup(c);
        let last = eng.add({ kind: 'reducescatter', layer, resources: syncLanes(sg.shardLink.lane), devices: t.devices, durationMs: syncs * reduceScatterMs(bucket.bytes, sg.shards, sg.shardLink), deps, bytes: bucket.bytes, ...mb });
        // HSDP: each shard is then all-reduced across the node replicas.
        if (sg.replicas > 1) last = eng.add({ kind: 'allreduce', layer, resources: syncLanes(sg.replicaLink.lane), devices: t.devices, durationMs: syncs * allReduceMs(bucket.bytes / sg.shards, sg.replicas, sg.replicaLink), deps: [last], bytes: bucket.bytes / sg.shards, ...mb });
        bucketTasks.push(last);
      } else {
        const link = t.dataGroupLink(c);
        bucketTasks.push(eng.add({ kind: 'allreduce', layer, resources: syncLanes(link.lane), devices: t.devices, durationMs: syncs * allReduceMs(bucket.bytes, c.d, link), deps, bytes: bucket.bytes, ...mb }));
      }
      bucket = undefined;
    };

    for (let i = L - 1; i >= 0; i--) {
      const deps: number[] = [];
      for (const e of t.outEdges[i]) {
        const to = t.edges[e].to;
        const [, bwd] = t.edgeCostParts(e, choice[i], choice[to]);
        if (bwd > 0) {
          deps.push(eng.add({ kind: 'transfer', layer: name(to), resources: [edgeLane(i, to)], devices: t.devices, durationMs: bwd * share, deps: [bwdEnd[to]], bytes: t.edges[e].bytes * share, ...mb }));
        } else deps.push(bwdEnd[to]);
      }
      if (t.outEdges[i].length === 0 && lossReady >= 0) deps.push(lossReady);
      const o = opt(i);
      const g = gatherFor(i, i + 2 < L ? [bwdCompute[i + 2]] : [lossReady]);
      if (g !== undefined) deps.push(g);
      // Recompute the layer's forward (full: its block's; selective: the attention core) just before its backward.
      if (o.recomputeMs > 0) deps.push(eng.add({ kind: 'recompute', layer: name(i), resources: lanes, devices: t.devices, durationMs: o.recomputeMs * share, deps: [...deps], ...mb }));
      const comp = eng.add({ kind: 'backward', layer: name(i), resources: lanes, devices: t.devices, durationMs: o.backwardMs * share, deps, ...mb });
      bwdCompute[i] = comp;
      bwdEnd[i] = o.mpBackwardMs > 0 ? eng.add({ kind: 'transfer', layer: name(i), resources: [modelLane(i)], devices: t.devices, durationMs: o.mpBackwardMs * share, deps: [comp], ...mb }) : comp;
      // Offloaded gradients go down to the CPU optimizer as soon as the layer's backward has made them; under no_sync
      // only the last micro-step's, reduced (hostDownloadMs is then that one copy).
      const downShare = unsharded && sharded(i) ? (syncGradients ? 1 : 0) : share;
      if (o.hostDownloadMs > 0 && downShare > 0) downloads.push(eng.add({ kind: 'transfer', layer: `${name(i)} gradients to CPU`, resources: [HOST_LANE], devices: t.devices, durationMs: o.hostDownloadMs * downShare, deps: [comp], bytes: o.allreduceBytes, ...mb }));
      if (syncGradients && o.allreduceBytes > 0) {
        const key = `${o.config.d}x${o.config.k}`;
        if (bucket && bucket.key !== key) flush();
        bucket ??= { layers: [], bytes: 0, key };
        bucket.layers.push(i);
        bucket.bytes += o.allreduceBytes;
        if (bucket.bytes >= (bucketTasks.length === 0 ? firstCap : bucketCap)) flush();
      }
    }
    flush();
    lastPassSyncs = bucketTasks;
    return [...Array.from(bwdEnd), ...bucketTasks, ...downloads];
  };

  let done: number[] = [];
  let lastAfter: number[] = [];
  // The updated weights are gathered once, in the iteration's first forward (the first pass).
  if (A > 1 && allReduceEach) {
    // A synced backward ends with DDP's reducer making the stream wait for its buckets (finalize_backward), so each
    // micro-step's forward starts once the one before has all-reduced.
    for (let m = 0; m < A - 1; m++) {
      const tasks = pass(1 / A, ` (micro-step ${m + 1})`, m, lastAfter, true, gatherInForward && m === 0, true);
      lastAfter = [...tasks.slice(0, 1), ...lastPassSyncs];
      done = done.concat(tasks);
      yield;
    }
  } else if (A > 1) {
    done = pass((A - 1) / A, ` (micro-steps 1–${A - 1})`, 0, [], syncEveryMicroStep, gatherInForward);
    lastAfter = done.slice(0, 1);
  }
  yield;
  done = pass(1 / A, A > 1 ? ` (micro-step ${A})` : '', A > 1 ? A - 1 : undefined, lastAfter, true, gatherInForward && A === 1).concat(done);

  let updateMs = 0;
  for (let i = 0; i < L; i++) updateMs += opt(i).updateMs;
  const updateLabel = t.setup.paramOffload ? 'optimizer (on the CPU: parameters and gradients offloaded)' : t.setup.cpuOffload ? 'optimizer (on the CPU, then weights up over PCIe)' : 'optimizer';
  const update = eng.add({ kind: 'update', layer: updateLabel, resources: lanes, devices: t.devices, durationMs: updateMs, deps: done });
  if (!gatherInForward) addStepGathers(eng, t, choice, update);
  return yield* eng.runSteps();
}

/**
 * ZeRO-1/2: each rank stepped only its slice of the optimizer state, so the updated weights are all-gathered from
 * their owners before the next forward. DeepSpeed does it inside the optimizer step (stage_1_and_2.py step():
 * all_gather_dp_groups over allgather_bucket_size buckets, default 5e8 elements), as PyTorch's
 * ZeroRedundancyOptimizer syncs its parameters at the end of step(): nothing computes beside it. One gather per
 * shard group, of all its layers' weights (a bucket that large holds most models whole).
 */
function addStepGathers(eng: Engine, t: CostTables, choice: ArrayLike<number>, update: number): void {
  const groups = new Map<string, { layer: number; bytes: number }>();
  for (let i = 0; i < t.layers.length; i++) {
    const o = t.options[i][choice[i]];
    if (o.stepGatherBytes <= 0) continue;
    const key = `${o.config.d}x${o.config.k}`;
    const g = groups.get(key);
    if (g) g.bytes += o.stepGatherBytes;
    else groups.set(key, { layer: i, bytes: o.stepGatherBytes });
  }
  for (const { layer, bytes } of groups.values()) {
    const sg = t.shardGroup(t.options[layer][choice[layer]].config);
    eng.add({ kind: 'allgather', layer: 'updated weights (ZeRO-1/2)', resources: [sg.shardLink.lane], devices: t.devices, durationMs: allGatherMs(bytes, sg.shards, sg.shardLink), deps: [update], bytes });
  }
}

/**
 * ZeRO-1/2 gathering in the next forward: the updated weights in forward order, cut into buckets of the gradient
 * buckets' size (Megatron gathers its parameters in the very buckets it reduces gradients in; FSDP one wrapped
 * unit, typically a block, at a time) and at a change of shard group. One collective per layer would pay the
 * collective's latency per op, which neither framework does.
 */
function updatedWeightBuckets(t: CostTables, choice: ArrayLike<number>, capBytes: number): { bucketOf: Int32Array; firstLayer: number[]; bytes: number[]; task: number[] } {
  const bucketOf = new Int32Array(t.layers.length).fill(-1);
  const firstLayer: number[] = [];
  const bytes: number[] = [];
  let key = '';
  for (let i = 0; i < t.layers.length; i++) {
    const o = t.options[i][choice[i]];
    if (o.stepGatherBytes <= 0) continue;
    const k = `${o.config.d}x${o.config.k}`;
    const b = bytes.length - 1;
    if (b < 0 || k !== key || bytes[b] >= capBytes) {
      firstLayer.push(i);
      bytes.push(o.stepGatherBytes);
      key = k;
    } else bytes[b] += o.stepGatherBytes;
    bucketOf[i] = bytes.length - 1;
  }
  return { bucketOf, firstLayer, bytes, task: new Array<number>(bytes.length).fill(-1) };
}
