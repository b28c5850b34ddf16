/**
 * The parent side of one trial worker: starts it (fork for tfjs, python3 for
 * torch; argument arrays, never a shell), sends one request at a time, and turns
 * a crash, a signal or a timeout into an error for that request.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BackendId } from '../protocol/profile';
import type { ParentMessage, RuntimeInfo, WorkerMessage } from './worker/messages';
import { resolvePython } from './pythonEnv';

export class WorkerFailure extends Error {
  override name = 'WorkerFailure';
  constructor(message: string, readonly kind: 'crash' | 'timeout' | 'init') {
    super(message);
  }
}

export class Cancelled extends Error {
  override name = 'Cancelled';
  constructor() {
    super('profiling was cancelled');
  }
}

export interface CancelToken {
  readonly isCancellationRequested: boolean;
}

/** The tfjs worker: the bundle beside us, or the TypeScript source under tsx when running from source. */
export function tfjsWorkerEntry(): { file: string; execArgv: string[] } {
  if (process.env.WAP_TRIAL_WORKER) return { file: process.env.WAP_TRIAL_WORKER, execArgv: [] };
  const bundled = join(__dirname, 'trialWorker.js');
  if (!__filename.endsWith('.ts') && existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: join(__dirname, 'worker', 'trialWorker.ts'), execArgv: ['--import', 'tsx'] };
}

export function torchWorkerScript(): string {
  const bundled = join(__dirname, 'torch_worker.py');
  if (existsSync(bundled)) return bundled;
  return join(__dirname, 'torch', 'torch_worker.py');
}

type Outgoing = Exclude<ParentMessage, { type: 'init' } | { type: 'exit' }>;
type Request = Outgoing extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

export class WorkerClient {
  private nextId = 1;
  private pending?: { id: number; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void };
  private stderrTail = '';
  private exited = false;
  deviceName = '';
  version = '';
  /** From a tfjs worker's ready message: which tf namespace it measures with. */
  runtime?: RuntimeInfo;

  private constructor(
    private readonly child: ChildProcess,
    private readonly post: (m: ParentMessage) => void,
    readonly backend: BackendId,
  ) {
    child.stderr?.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      const why = signal ? `killed by ${signal}` : `exited with code ${code}`;
      const hint = /out of memory|heap limit|OOM|CUDA_ERROR_OUT_OF_MEMORY/i.test(this.stderrTail) ? ' (out of memory)' : '';
      const last = this.stderrTail.trim().split('\n').pop() ?? '';
      this.fail(new WorkerFailure(`trial worker ${why}${hint}${last ? `: ${last.slice(0, 200)}` : ''}`, 'crash'));
    });
    child.on('error', (err) => this.fail(new WorkerFailure(`trial worker failed: ${err.message}`, 'crash')));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /**
   * `tfjsEntryFile` replaces the tfjs worker script (used by tests to make a start really fail);
   * `python` is the torch backend's interpreter (resolvePython: explicit, WAP_PYTHON, python3).
   */
  static async start(backend: BackendId, env: NodeJS.ProcessEnv, initTimeoutMs: number, opts: { tfjsEntryFile?: string; python?: string } = {}): Promise<WorkerClient> {
    let client: WorkerClient;
    const tfjsEntryFile = opts.tfjsEntryFile;
    if (backend === 'torch') {
      // -B: no __pycache__ beside the worker script (it may sit in a read-only extension folder).
      const child = spawn(resolvePython(opts.python), ['-B', torchWorkerScript()], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      client = new WorkerClient(child, (m) => child.stdin?.write(`${JSON.stringify(m)}\n`), backend);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.trim().startsWith('{')) return;
        try {
          client.receive(JSON.parse(line) as WorkerMessage);
        } catch {
          /* a stray print from a library: not ours */
        }
      });
      child.stdin?.on('error', () => undefined);
    } else {
      const entry = tfjsEntryFile ? { file: tfjsEntryFile, execArgv: [] } : tfjsWorkerEntry();
      const child = fork(entry.file, [], { env, execArgv: entry.execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
      client = new WorkerClient(child, (m) => child.connected && child.send(m), backend);
      child.on('message', (m) => client.receive(m as WorkerMessage));
    }
    const ready = await client.call({ type: 'init', backend } as ParentMessage, initTimeoutMs, undefined, true);
    if (ready.type === 'initFailed') {
      client.kill();
      throw new WorkerFailure(`${backend} backend failed to start: ${ready.error}`, 'init');
    }
    if (ready.type === 'ready') {
      client.deviceName = ready.deviceName;
      client.version = ready.version;
      client.runtime = ready.runtime;
    }
    return client;
  }

  /** Sends one request and waits for its answer, a crash, the timeout or cancellation. */
  request(req: Request, timeoutMs: number, cancel?: CancelToken): Promise<WorkerMessage> {
    return this.call(req as unknown as ParentMessage, timeoutMs, cancel, false);
  }

  private call(msg: ParentMessage, timeoutMs: number, cancel: CancelToken | undefined, isInit: boolean): Promise<WorkerMessage> {
    if (this.exited) return Promise.reject(new WorkerFailure('trial worker is not running', 'crash'));
    const id = isInit ? 0 : this.nextId++;
    return new Promise<WorkerMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        this.fail(new WorkerFailure(`trial timed out after ${timeoutMs} ms`, 'timeout'));
      }, timeoutMs);
      const poll = cancel
        ? setInterval(() => {
            if (!cancel.isCancellationRequested) return;
            this.kill();
            this.fail(new Cancelled());
          }, 25)
        : undefined;
      const done = () => {
        clearTimeout(timer);
        if (poll) clearInterval(poll);
        this.pending = undefined;
      };
      this.pending = {
        id,
        resolve: (m) => {
          done();
          resolve(m);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      this.post(isInit ? msg : ({ ...msg, id } as ParentMessage));
    });
  }

  private receive(m: WorkerMessage): void {
    const p = this.pending;
    if (!p) return;
    const id = 'id' in m ? m.id : 0;
    if (id === p.id) p.resolve(m);
  }

  private fail(err: Error): void {
    this.pending?.reject(err);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.exited) this.child.kill(signal);
  }

  /** Asks politely, then makes sure. */
  close(): void {
    if (this.exited) return;
    try {
      this.post({ type: 'exit' });
    } catch {
      /* channel already closed */
    }
    setTimeout(() => this.kill(), 500).unref();
  }
}
