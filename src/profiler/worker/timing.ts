/**
 * Trial timing inside a worker: warm-up, then N timed repetitions, each one
 * ending only after the device has finished (the outputs are read back).
 */
import type * as tfc from '@tensorflow/tfjs-core';
import type { Tensor } from '@tensorflow/tfjs-core';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import type { BackendId } from '../../protocol/profile';
import { Unsupported } from './builtLayer';
import { buildLayer, randomInputs } from './layerBuilder';
import { toChannelsLast } from './layerLayout';
import type { ModelInputSpec, TrialSpec, TrialTiming } from './messages';

export interface Stats {
  median: number;
  spread: number;
  samples: number[];
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] ?? 0;
  const median = s.length % 2 ? at(0.5) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
  return { median, spread: median > 0 ? (at(0.9) - at(0.1)) / median : 0, samples };
}

/**
 * Waits for the device. Native GPU backends run asynchronously, so every output
 * is read back. Wasm and cpu kernels have already run when the op returns, so
 * reading the smallest output confirms completion without timing a large copy.
 */
async function settle(outs: Tensor[], backend: BackendId): Promise<void> {
  if (backend === 'wasm' || backend === 'cpu') {
    const smallest = outs.reduce((a, b) => (b.size < a.size ? b : a));
    await smallest.data();
    return;
  }
  for (const t of outs) await t.data();
}

/** One run of `fn`, until the device has finished, in milliseconds. */
async function timeOnce(fn: () => Tensor[], backend: BackendId): Promise<number> {
  const t0 = performance.now();
  const outs = tf.tidy(fn);
  await settle(outs, backend);
  const t1 = performance.now();
  tf.dispose(outs);
  return t1 - t0;
}

async function timeRuns(fn: () => Tensor[], warmup: number, reps: number, backend: BackendId): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + reps; i++) {
    const ms = await timeOnce(fn, backend);
    if (i >= warmup) samples.push(ms);
  }
  return samples;
}

/**
 * Forward and forward+backward alternately, each backward taken as its pair's difference. On a shared machine a
 * load spike then hits both runs of a pair; timed in two blocks, a slow stretch during the forward block alone made
 * the forward median exceed forward+backward, and a conv's backward came out as 0 ms.
 */
async function timePairs(forward: () => Tensor[], both: () => Tensor[], warmup: number, reps: number, backend: BackendId): Promise<{ forward: number[]; backward: number[] }> {
  const out = { forward: [] as number[], backward: [] as number[] };
  for (let i = 0; i < warmup + reps; i++) {
    const f = await timeOnce(forward, backend);
    const fb = await timeOnce(both, backend);
    if (i < warmup) continue;
    out.forward.push(f);
    out.backward.push(Math.max(0, fb - f));
  }
  return out;
}

/** Forward, and forward+backward against a random output gradient, in pairs; backward = each pair's difference. */
export async function timeLayer(spec: TrialSpec, batch: number, warmup: number, reps: number, backend: BackendId): Promise<TrialTiming> {
  const layer = buildLayer(spec, batch);
  const xs = randomInputs(spec, batch);
  try {
    const y = tf.tidy(() => layer.apply(xs));
    const dy = tf.randomNormal(y.shape, 0, 1, 'float32');
    y.dispose();
    const inputTargets = spec.needsInputGrad ? xs.filter((x) => x.dtype === 'float32') : [];
    const targets: Tensor[] = [...inputTargets, ...layer.params];
    const forward = () => [layer.apply(xs)];
    const both = () => {
      const r = tf.engine().gradients(() => layer.apply(xs), targets, dy);
      return [r.value, ...r.grads];
    };
    let fwd: Stats;
    let bwd: Stats = { median: 0, spread: 0, samples: [] };
    let peak: number | undefined;
    if (targets.length > 0) {
      const pairs = await timePairs(forward, both, warmup, reps, backend);
      fwd = stats(pairs.forward);
      bwd = stats(pairs.backward);
      const prof = await tf.profile(() => tf.tidy(both));
      peak = prof.peakBytes;
      tf.dispose(prof.result as Tensor[]);
    } else {
      fwd = stats(await timeRuns(forward, warmup, reps, backend));
      const prof = await tf.profile(() => tf.tidy(forward));
      peak = prof.peakBytes;
      tf.dispose(prof.result as Tensor[]);
    }
    dy.dispose();
    return {
      forwardMs: fwd.median,
      backwardMs: bwd.median,
      forwardSpread: fwd.spread,
      backwardSpread: bwd.spread,
      repetitions: reps,
      peakMemoryBytes: peak,
    };
  } finally {
    tf.dispose(xs);
    tf.dispose(layer.params);
  }
}

/** One whole training step (forward through the DAG, mean-of-outputs loss, all gradients). */
export async function timeWholeStep(
  specs: TrialSpec[],
  inputs: ModelInputSpec[],
  outputs: string[],
  batch: number,
  warmup: number,
  reps: number,
  backend: BackendId,
): Promise<Stats> {
  const firstLayout = specs[0]?.layout;
  specs = specs.map(toChannelsLast);
  const built = specs.map((s) => {
    try {
      return buildLayer(s, batch);
    } catch (err) {
      if (err instanceof Unsupported) throw new Unsupported(`layer ${s.name}: ${err.message}`);
      throw err;
    }
  });
  const feeds = new Map<string, Tensor>();
  for (const inp of inputs) {
    const consumer = specs.find((s) => s.inputs.includes(inp.id));
    const idx = consumer ? consumer.inputs.indexOf(inp.id) : -1;
    const shape = consumer && idx >= 0 ? consumer.inputShapes[idx]! : firstLayout === 'channels_first' && inp.shape.length === 3 ? [...inp.shape.slice(1), inp.shape[0]!] : inp.shape;
    const layoutSpec: TrialSpec = { ...specs[0]!, op: 'identity', layout: 'channels_last', inputShapes: [shape], inputDtypes: [inp.dtype] };
    feeds.set(inp.id, randomInputs(layoutSpec, batch, 2)[0]!);
  }
  const params = built.flatMap((b) => b.params);
  const forward = (): tfc.Scalar => {
    const values = new Map(feeds);
    specs.forEach((s, i) => {
      const xs = s.inputs.map((id) => values.get(id));
      if (xs.some((x) => !x)) throw new Error(`layer ${s.name}: an input is not produced by an earlier layer`);
      values.set(s.id, built[i]!.apply(xs as Tensor[]));
    });
    const outs = outputs.map((id) => values.get(id)).filter((t): t is Tensor => !!t);
    return outs.map((o) => tf.mean(o)).reduce((a, b) => tf.add(a, b)) as tfc.Scalar;
  };
  const step = () => {
    const r = tf.variableGrads(forward, params);
    return [r.value, ...Object.values(r.grads)];
  };
  try {
    return stats(await timeRuns(step, warmup, reps, backend));
  } finally {
    tf.dispose([...feeds.values()]);
    tf.dispose(params);
  }
}

/** Host→device upload plus device→host read-back, per size: the α-β points. */
export async function timeCopies(sizesBytes: number[], reps: number): Promise<Array<{ bytes: number; ms: number }>> {
  const points: Array<{ bytes: number; ms: number }> = [];
  for (const bytes of sizesBytes) {
    const host = new Float32Array(Math.max(1, Math.floor(bytes / 4)));
    for (let i = 0; i < host.length; i += 97) host[i] = Math.random();
    const samples: number[] = [];
    for (let i = 0; i < reps + 1; i++) {
      const t0 = performance.now();
      const t = tf.tensor1d(host);
      await t.data();
      const t1 = performance.now();
      t.dispose();
      if (i > 0) samples.push(t1 - t0);
    }
    points.push({ bytes: host.length * 4, ms: stats(samples).median });
  }
  return points;
}
