/**
 * Profiles a model layer by layer on one backend: cache first, then trials in
 * an isolated worker; a layer whose trial fails falls back to the analytical
 * estimate (marked), and the next layer gets a fresh worker.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyzedModel } from '../core/ir';
import { layerSignature } from '../core/signature';
import {
  PROFILE_FORMAT,
  PROFILE_VERSION,
  type BackendId,
  type LayerMeasurement,
  type LinkCalibration,
  type MeasuredDevice,
  type ProfileFile,
} from '../protocol/profile';
import { chooseBackend, deviceIdentities, probeTorch, type DeviceIdentity } from './backends';
import { cacheKey, TrialCache } from './cache';
import { COPY_SIZES_BYTES, hostDeviceLink, hostMemoryLink, topologyLinks } from './calibration';
import { detectLocalGpus, readGpuTopology } from './gpus';
import { resolvePython } from './pythonEnv';
import { analyticalEstimate, modelInputSpecs, toTrialSpec, untrialable } from './trialSpecs';
import { Cancelled, WorkerClient, WorkerFailure, type CancelToken } from './workerClient';
import type { TrialTiming } from './worker/messages';

export interface ProgressEvent {
  done: number;
  total: number;
  layer: string;
  etaMs?: number;
  cached: boolean;
}

export interface ProfileOptions {
  backend?: BackendId | 'auto';
  batch: number;
  cacheDir: string;
  warmup?: number;
  repetitions?: number;
  trialTimeoutMs?: number;
  /** Workers run only in a trusted workspace: false refuses before anything is spawned. */
  trusted: boolean;
  onProgress?: (e: ProgressEvent) => void;
  cancel?: CancelToken;
  /** Also time one whole training step on the same backend (ProfileFile.wholeStep). */
  wholeStep?: boolean;
  /** Source file, recorded in the profile. */
  file?: string;
  /**
   * CPU threads each torch trial may use (OMP_NUM_THREADS), to measure as one of
   * N processes sharing the machine does (`wap validate`). Part of the device name, so the cache keeps them apart.
   */
  threads?: number;
  /** Interpreter for the torch backend (CLI `--python`, the editor's selected environment); else WAP_PYTHON, else python3. */
  python?: string;
}

export class UntrustedError extends Error {
  override name = 'UntrustedError';
  constructor() {
    super('profiling starts trial worker processes, which is only allowed in a trusted workspace; refusing to spawn anything');
  }
}

const INIT_TIMEOUT_MS = 120_000;

/** One measuring worker per distinct device; identical GPUs share its numbers. */
interface DeviceGroup {
  identity: DeviceIdentity;
  devices: number[];
}

function groupDevices(ids: DeviceIdentity[]): DeviceGroup[] {
  const groups = new Map<string, DeviceGroup>();
  ids.forEach((id, i) => {
    const k = `${id.deviceName}\n${id.version}`;
    const g = groups.get(k);
    if (g) g.devices.push(i);
    else groups.set(k, { identity: id, devices: [i] });
  });
  return [...groups.values()];
}

function workerEnv(id: DeviceIdentity, threads?: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (threads) env.OMP_NUM_THREADS = String(threads);
  if (id.gpu !== undefined) {
    env.CUDA_VISIBLE_DEVICES = String(id.gpu);
    env.WAP_GPU_NAME = id.deviceName;
  }
  // Keep the parent's test hooks out of the worker.
  delete env.WAP_TEST_KILL_AT_LAYER;
  delete env.WAP_TEST_FAIL_RESTART;
  return env;
}

export async function profileModel(model: AnalyzedModel, options: ProfileOptions): Promise<ProfileFile> {
  if (!options.trusted) throw new UntrustedError();
  if (!Number.isInteger(options.batch) || options.batch < 1) throw new Error(`batch must be a positive integer, got ${options.batch}`);
  const backend = !options.backend || options.backend === 'auto' ? await chooseBackend(options.python) : options.backend;
  let python: ProfileFile['python'];
  if (backend === 'torch') {
    const t = await probeTorch(options.python);
    if (!t.ok) throw new Error(`torch backend unavailable: ${t.reason}`);
    python = { interpreter: t.python ?? resolvePython(options.python), executable: t.executable, torchVersion: t.version };
  }
  const threads = backend === 'torch' && options.threads ? options.threads : undefined;
  const identities = (await deviceIdentities(backend, options.python)).map((id) =>
    threads && id.gpu === undefined ? { ...id, deviceName: `${id.deviceName}, ${threads} thread${threads > 1 ? 's' : ''}` } : id,
  );
  if (identities.length === 0) throw new Error(`backend ${backend} found no device to measure on`);
  const devices: MeasuredDevice[] = identities.map((d, index) => ({ index, name: d.deviceName, backend, version: d.version, memoryBytes: d.memoryBytes }));
  const warnings: string[] = [];
  const layers: LayerMeasurement[] = [];
  const links: LinkCalibration[] = [];
  let wholeStep: ProfileFile['wholeStep'];
  const groups = groupDevices(identities);
  const total = model.layers.length * groups.length;
  let done = 0;
  let trialMsSum = 0;
  let trialsRun = 0;

  for (const group of groups) {
    const cache = new TrialCache(options.cacheDir, group.identity);
    if (cache.warning) warnings.push(cache.warning);
    const run = new DeviceRun(group.identity, options);
    try {
      const measured: LayerMeasurement[] = [];
      for (const [index, layer] of model.layers.entries()) {
        if (options.cancel?.isCancellationRequested) throw new Cancelled();
        const signature = layerSignature(layer, options.batch, model.dtypeBytes);
        const spec = toTrialSpec(layer, model);
        const key = cacheKey(signature, options.batch, 'float32', model.layout, spec);
        const base = { layer: layer.name, signature, device: group.devices[0]!, batch: options.batch };
        const hit = cache.get(key);
        const started = Date.now();
        let m: LayerMeasurement;
        if (hit?.unsupported) {
          m = { ...base, forwardMs: 0, backwardMs: 0, forwardSpread: 0, backwardSpread: 0, repetitions: 0, status: 'fallback', error: hit.unsupported };
        } else if (hit) {
          m = { ...base, ...timingOf(hit), status: 'cached' };
        } else {
          const why = untrialable(layer);
          const outcome = why ? { error: why } : await run.trial(spec, index);
          if ('forwardMs' in outcome) {
            cache.put(key, outcome);
            m = { ...base, ...timingOf(outcome), status: 'measured' };
          } else {
            m = { ...base, forwardMs: 0, backwardMs: 0, forwardSpread: 0, backwardSpread: 0, repetitions: 0, status: 'fallback', error: outcome.error };
            // "Cannot build" is a property of the layer, not of this run: remember it. Crashes and timeouts are retried.
            if (outcome.error.startsWith('unsupported:')) cache.put(key, { forwardMs: 0, backwardMs: 0, forwardSpread: 0, backwardSpread: 0, repetitions: 0 }, outcome.error);
          }
          trialMsSum += Date.now() - started;
          trialsRun++;
        }
        measured.push(m);
        done++;
        const remainingTrials = model.layers.length - index - 1;
        const etaMs = trialsRun ? Math.round((trialMsSum / trialsRun) * remainingTrials) : undefined;
        options.onProgress?.({ done, total, layer: layer.name, etaMs, cached: !!hit });
      }
      if (run.brokenReason) warnings.push(`${group.identity.deviceName}: ${run.brokenReason}; its remaining layers use the analytical estimate`);
      fillFallbacks(model, measured, options.batch);
      // Identical GPUs share the representative's numbers.
      for (const d of group.devices) layers.push(...measured.map((m) => ({ ...m, device: d })));
      links.push(...(await run.calibrate(cache, group.devices, warnings)));
      if (options.wholeStep && !wholeStep) {
        const ws = await run.wholeStep(model);
        if ('ms' in ws) wholeStep = { device: group.devices[0]!, batch: options.batch, ms: ws.ms };
        else warnings.push(`whole-step measurement failed: ${ws.error}`);
      }
    } finally {
      run.close();
    }
  }
  const gpus = backend === 'tfjs-node-gpu' || backend === 'torch' ? await detectLocalGpus() : [];
  if (gpus.length > 1) {
    const topo = await readGpuTopology();
    if (topo) links.push(...topologyLinks(topo, (g) => identities.findIndex((d) => d.gpu === g)).filter((l) => l.devices.every((d) => d >= 0)));
  }
  return {
    format: PROFILE_FORMAT,
    version: PROFILE_VERSION,
    createdAt: new Date().toISOString(),
    model: model.name,
    file: options.file,
    dtype: 'float32',
    devices,
    layers,
    links,
    wholeStep,
    ...(python ? { python } : {}),
    warnings,
  };
}

const timingOf = (t: TrialTiming): TrialTiming => ({
  forwardMs: t.forwardMs,
  backwardMs: t.backwardMs,
  forwardSpread: t.forwardSpread,
  backwardSpread: t.backwardSpread,
  repetitions: t.repetitions,
  ...(t.peakMemoryBytes !== undefined ? { peakMemoryBytes: t.peakMemoryBytes } : {}),
});

/** Gives failed layers the analytical estimate at this run's measured FLOP rate. */
function fillFallbacks(model: AnalyzedModel, measured: LayerMeasurement[], batch: number): void {
  let flops = 0;
  let ms = 0;
  model.layers.forEach((l, i) => {
    const m = measured[i]!;
    if (m.status === 'fallback') return;
    flops += (l.workload.forwardFlops + l.workload.backwardFlops) * batch;
    ms += m.forwardMs + m.backwardMs;
  });
  const msPerFlop = flops > 1e6 && ms > 0 ? ms / flops : undefined;
  model.layers.forEach((l, i) => {
    const m = measured[i]!;
    if (m.status !== 'fallback') return;
    Object.assign(m, analyticalEstimate(l, batch, msPerFlop));
    m.error = `${m.error}; using the analytical estimate${msPerFlop ? ' at the FLOP rate measured for the other layers' : ''}`;
  });
}

/**
 * The worker for one device: started lazily (a fully cached run starts none) and restarted after a failure.
 * A crashed trial worker loses nothing: if the replacement cannot start, this device is marked broken and
 * every later request answers with that reason (the layers become analytical fallbacks) instead of failing the profile.
 */
class DeviceRun {
  private worker?: WorkerClient;
  private killHookUsed = false;
  private hadWorker = false;
  /** Why the replacement worker could not start; set once, then every request fails fast with it. */
  brokenReason?: string;

  constructor(
    private readonly id: DeviceIdentity,
    private readonly options: ProfileOptions,
  ) {}

  private async ensure(): Promise<WorkerClient> {
    if (this.worker?.alive) return this.worker;
    if (this.brokenReason) throw new WorkerFailure(this.brokenReason, 'crash');
    if (!this.hadWorker) {
      // The first start failing means the backend is unusable: that is the caller's error, as before.
      this.worker = await WorkerClient.start(this.id.backend, workerEnv(this.id, this.id.backend === 'torch' ? this.options.threads : undefined), INIT_TIMEOUT_MS, { python: this.options.python });
      this.hadWorker = true;
      return this.worker;
    }
    // Test hook: the replacement worker's script is missing, so its start really fails.
    const entry = process.env.WAP_TEST_FAIL_RESTART === '1' ? join(tmpdir(), 'wap-missing-trial-worker.js') : undefined;
    try {
      this.worker = await WorkerClient.start(this.id.backend, workerEnv(this.id, this.id.backend === 'torch' ? this.options.threads : undefined), INIT_TIMEOUT_MS, { tfjsEntryFile: entry, python: this.options.python });
      return this.worker;
    } catch (err) {
      if (err instanceof Cancelled) throw err;
      this.worker = undefined;
      this.brokenReason = `replacement trial worker failed to start after a crash: ${(err as Error).message}`;
      throw new WorkerFailure(this.brokenReason, 'crash');
    }
  }

  async trial(spec: ReturnType<typeof toTrialSpec>, index: number): Promise<TrialTiming | { error: string }> {
    let w: WorkerClient;
    try {
      w = await this.ensure();
    } catch (err) {
      // Only a failed restart is absorbed; a failed first start still fails the profile.
      if (this.brokenReason && err instanceof WorkerFailure) return { error: this.brokenReason };
      throw err;
    }
    const timeout = this.options.trialTimeoutMs ?? 60_000;
    const pending = w.request(
      { type: 'trial', spec, batch: this.options.batch, warmup: this.options.warmup ?? 2, repetitions: this.options.repetitions ?? 5 },
      timeout,
      this.options.cancel,
    );
    // Test hook: SIGKILL the worker as layer k starts, to exercise crash recovery.
    const killAt = process.env.WAP_TEST_KILL_AT_LAYER;
    if (killAt !== undefined && Number(killAt) === index && !this.killHookUsed) {
      this.killHookUsed = true;
      // At once, not on a later tick: a small layer's trial must not finish before the kill lands.
      w.kill('SIGKILL');
    }
    try {
      const r = await pending;
      if (r.type === 'result') return r;
      if (r.type === 'unsupported') return { error: `unsupported: ${r.reason}` };
      if (r.type === 'failed') return { error: `trial failed: ${r.error}` };
      return { error: `unexpected worker reply '${r.type}'` };
    } catch (err) {
      if (err instanceof Cancelled) throw err;
      if (err instanceof WorkerFailure) {
        this.worker = undefined;
        return { error: err.message };
      }
      throw err;
    }
  }

  /** Host↔device α-β from copies of several sizes (a host memcpy on CPU backends); measured once per device and cached. */
  async calibrate(cache: TrialCache, devices: number[], warnings: string[]): Promise<LinkCalibration[]> {
    type Points = Array<{ bytes: number; ms: number }>;
    let points = cache.getExtra('copyPoints') as Points | undefined;
    if (!Array.isArray(points) || points.length < 2) {
      try {
        const w = await this.ensure();
        const r = await w.request({ type: 'copy', sizesBytes: COPY_SIZES_BYTES, repetitions: 5 }, this.options.trialTimeoutMs ?? 60_000, this.options.cancel);
        if (r.type !== 'copyResult') throw new Error(r.type === 'failed' ? r.error : `unexpected reply ${r.type}`);
        points = r.points;
        cache.putExtra('copyPoints', points);
      } catch (err) {
        if (err instanceof Cancelled) throw err;
        warnings.push(`copy calibration failed: ${(err as Error).message}`);
        return [];
      }
    }
    // Only a GPU device has a host↔device link; on a CPU backend the same copy is a memcpy.
    const link = this.id.gpu !== undefined ? hostDeviceLink : hostMemoryLink;
    return devices.map((d) => link(d, this.id.deviceName, points!));
  }

  async wholeStep(model: AnalyzedModel): Promise<{ ms: number } | { error: string }> {
    try {
      const w = await this.ensure();
      const specs = model.layers.map((l) => toTrialSpec(l, model));
      const timeout = (this.options.trialTimeoutMs ?? 60_000) * 4;
      const r = await w.request(
        { type: 'wholeStep', specs, inputs: modelInputSpecs(model), outputs: model.outputs, batch: this.options.batch, warmup: this.options.warmup ?? 2, repetitions: this.options.repetitions ?? 5 },
        timeout,
        this.options.cancel,
      );
      if (r.type === 'wholeStepResult') return { ms: r.ms };
      if (r.type === 'unsupported') return { error: r.reason };
      if (r.type === 'failed') return { error: r.error };
      return { error: `unexpected worker reply '${r.type}'` };
    } catch (err) {
      if (err instanceof Cancelled) throw err;
      this.worker = undefined;
      return { error: (err as Error).message };
    }
  }

  close(): void {
    this.worker?.close();
    this.worker = undefined;
  }
}

