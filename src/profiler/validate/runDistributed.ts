/**
 * Runs a few real data-parallel training steps of an analysed model with
 * torchrun (`python -m torch.distributed.run`) on local devices: gloo over CPU
 * processes or NCCL over CUDA devices. The model is built from the IR by
 * validate_dp.py (next to the torch trial worker), never from user code.
 *
 * The launcher runs in its own process group with an argument array (no
 * shell); a timeout or a cancel kills the whole group. A failing rank writes
 * its error beside the job file, so it is reported in one message instead of
 * the launcher's interleaved tracebacks.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyzedModel } from '../../core/ir';
import { modelInputSpecs, toTrialSpec } from '../trialSpecs';
import { resolvePython } from '../pythonEnv';
import { torchWorkerScript, Cancelled, type CancelToken } from '../workerClient';

/** How long the ranks may take to leave after the result is written: a clean gloo/NCCL teardown takes well under a second. */
const TEARDOWN_GRACE_MS = 30_000;
const TEARDOWN_HUNG = 'teardown hung after the result was written';

/** `cpu:N` (N gloo processes) or `cuda:0,1,…` (one NCCL process per listed GPU). */
export interface DeviceSet {
  kind: 'cpu' | 'cuda';
  count: number;
  /** CUDA device indices (cuda only). */
  cuda: number[];
}

export function parseDevices(text: string): DeviceSet {
  const m = /^(cpu|cuda):(.+)$/.exec(text.trim());
  if (m?.[1] === 'cpu' && /^[1-9]\d*$/.test(m[2]!)) return { kind: 'cpu', count: Number(m[2]), cuda: [] };
  if (m?.[1] === 'cuda') {
    const ids = m[2]!.split(',').map((s) => s.trim());
    if (ids.every((s) => /^\d+$/.test(s)) && new Set(ids).size === ids.length) return { kind: 'cuda', count: ids.length, cuda: ids.map(Number) };
  }
  throw new Error(`--devices expects cpu:N or cuda:I,J,… (e.g. cpu:2 or cuda:0,1), got '${text}'`);
}

export function describeDevices(d: DeviceSet): string {
  return d.kind === 'cpu' ? `${d.count} CPU process${d.count > 1 ? 'es' : ''} (gloo)` : `CUDA ${d.cuda.join(',')} (NCCL)`;
}

/** CPU threads each rank may use without oversubscribing the machine (what the calibration profile must use too). */
export function threadsPerProcess(d: DeviceSet): number {
  return d.kind === 'cpu' ? Math.max(1, Math.floor(cpus().length / d.count)) : 1;
}

export interface DistributedRunOptions {
  python?: string;
  devices: DeviceSet;
  /** Samples per rank per step. */
  batchPerRank: number;
  optimizer: string;
  warmup: number;
  steps: number;
  timeoutMs: number;
  cancel?: CancelToken;
  /** All-reduce sizes for the α-β calibration. */
  calibrationBytes: number[];
  /** How long the ranks may take to leave after the result is written (default TEARDOWN_GRACE_MS). */
  teardownGraceMs?: number;
}

export interface DistributedMeasurement {
  computeMs: number;
  allreduceMs: number;
  stepMs: number;
  allreducePoints: Array<{ bytes: number; ms: number }>;
  /** Read + write GB/s of a buffer copy on one rank while all ranks copy. */
  memoryBandwidthGBs: number;
  worldSize: number;
  torchVersion: string;
  backend: string;
  deviceName: string;
  params: number;
  warmup: number;
  steps: number;
  /** Set when the ranks hung after writing the result and were killed: the steps were timed, the exit was not clean. */
  teardownKilled?: string;
}

export function validateScript(): string {
  return join(torchWorkerScript(), '..', 'validate_dp.py');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The first failing rank's error (validate_dp.py writes rank-<R>.err beside the job), as one line. */
function failingRank(dir: string): string | undefined {
  const files = readdirSync(dir).filter((f) => /^rank-.*\.err$/.test(f)).sort();
  for (const f of files) {
    const first = readFileSync(join(dir, f), 'utf8').split('\n')[0]?.trim();
    if (first) return `rank ${f.slice(5, -4)} failed: ${first.slice(0, 400)}`;
  }
  return undefined;
}

export async function runDistributed(model: AnalyzedModel, options: DistributedRunOptions): Promise<DistributedMeasurement> {
  const dir = mkdtempSync(join(tmpdir(), 'wap-validate-'));
  const graceMs = options.teardownGraceMs ?? TEARDOWN_GRACE_MS;
  try {
    const resultFile = join(dir, 'result.json');
    const job = {
      specs: model.layers.map((l) => toTrialSpec(l, model)),
      inputs: modelInputSpecs(model),
      outputs: model.outputs,
      batch: options.batchPerRank,
      optimizer: options.optimizer,
      warmup: options.warmup,
      steps: options.steps,
      device: options.devices.kind,
      threadsPerProcess: threadsPerProcess(options.devices),
      calibrationBytes: options.calibrationBytes,
      resultFile,
    };
    const jobFile = join(dir, 'job.json');
    writeFileSync(jobFile, JSON.stringify(job));
    const port = await freePort();
    const args = [
      '-B', '-m', 'torch.distributed.run',
      '--nnodes', '1', '--nproc_per_node', String(options.devices.count),
      '--master_addr', '127.0.0.1', '--master_port', String(port),
      '--max_restarts', '0',
      // Explicit single-bit stream flags: torch 1.13's parser of the default '0' returns None under
      // Python ≥ 3.11 (IntFlag iteration skips zero and multi-bit members) and the launcher crashes.
      '--redirects', '1', '--tee', '2', '--log_dir', join(dir, 'logs'),
      validateScript(), '--job', jobFile,
    ];
    const env: NodeJS.ProcessEnv = { ...process.env, OMP_NUM_THREADS: String(job.threadsPerProcess), PYTHONDONTWRITEBYTECODE: '1' };
    if (options.devices.kind === 'cuda') env.CUDA_VISIBLE_DEVICES = options.devices.cuda.join(',');
    else env.CUDA_VISIBLE_DEVICES = '';
    const python = resolvePython(options.python);
    const { code, signal, stderr, why } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; why?: string }>((resolve) => {
      // detached: the launcher leads its own process group, so one kill reaches it and every rank.
      const child = spawn(python, args, { env, cwd: dir, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let why: string | undefined;
      child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
      const killGroup = (reason: string) => {
        why ??= reason;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => killGroup(`timed out after ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
      // Rank 0 writes the result after the last timed step; a gloo teardown (barrier, destroy_process_group) can
      // then hang when a peer has already gone (seen on torch 1.13 CPU). The measurement is complete by then.
      let resultSeenAt: number | undefined;
      const teardown = setInterval(() => {
        if (resultSeenAt === undefined) resultSeenAt = existsSync(resultFile) ? Date.now() : undefined;
        else if (Date.now() - resultSeenAt > graceMs) killGroup(TEARDOWN_HUNG);
      }, 500);
      const poll = options.cancel ? setInterval(() => options.cancel!.isCancellationRequested && killGroup('cancelled'), 25) : undefined;
      const finish = (r: { code: number | null; signal: NodeJS.Signals | null }) => {
        clearTimeout(timer);
        clearInterval(teardown);
        if (poll) clearInterval(poll);
        // Ranks the launcher left behind (it was killed) go with the group.
        killGroup(why ?? 'finished');
        resolve({ ...r, stderr, why: why === 'finished' ? undefined : why });
      };
      child.on('error', (err) => {
        why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${python} was not found` : err.message;
        finish({ code: null, signal: null });
      });
      child.on('exit', (c, s) => finish({ code: c, signal: s }));
    });
    if (why === 'cancelled') throw new Cancelled();
    if ((code === 0 || why === TEARDOWN_HUNG) && existsSync(resultFile)) {
      const measured = JSON.parse(readFileSync(resultFile, 'utf8')) as DistributedMeasurement;
      if (why !== TEARDOWN_HUNG) return measured;
      return { ...measured, teardownKilled: `the ranks had not exited ${Math.round(graceMs / 1000)} s after writing their timings and were killed; the timed steps had finished, but the run did not end cleanly` };
    }
    const rank = failingRank(dir);
    const launcher = stderr.split('\n').map((l) => l.trim()).filter((l) => l && !/^\*+$|OMP_NUM_THREADS|Setting OMP|warnings\.warn/.test(l)).pop();
    const what = why ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
    throw new Error(`torchrun (${python}, ${describeDevices(options.devices)}) ${what}${rank ? `; ${rank}` : launcher ? `: ${launcher.slice(0, 400)}` : ''}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
