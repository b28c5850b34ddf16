/**
 * What the machine offers and what the workspace allows: trust, local GPUs,
 * profiling backends and the cluster each document plans for. Detection
 * spawns processes (nvidia-smi, python), so it only runs when the workspace is
 * trusted; the status notification says why when it does not.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Connection } from 'vscode-languageserver';
import { availableBackends, detectLocalGpus } from '../profiler';
import { resolveCluster } from '../planner';
import { StatusNotification, type StatusParams } from '../protocol/lsp';
import type { WapSettings } from './settings';

export type LocalGpu = { index: number; name: string; memoryGB: number; driver?: string };
export type ClusterSpecOf = ReturnType<typeof resolveCluster>;

export interface ResolvedCluster {
  spec: ClusterSpecOf;
  /** Stable key for caching plans: the same key means the same cluster. */
  key: string;
  /** Why this cluster, for hovers: e.g. "default preset (no local GPU detected; set wap.cluster)". */
  note: string;
}

export class Environment {
  trusted: boolean;
  private gpus: Promise<LocalGpu[]> | undefined;
  private backend: Promise<{ id: string; device?: string } | undefined> | undefined;
  private lastError: string | undefined;
  private busy = 0;
  private readonly clusterCache = new Map<string, ResolvedCluster>();
  /** The workspace-level `wap.cluster`, so the status can describe the cluster plans really use (set by the server). */
  workspaceClusterSetting: () => Promise<string> = () => Promise.resolve('');

  constructor(
    private readonly connection: Connection,
    trusted: boolean,
    private readonly workspaceRoots: () => string[],
  ) {
    this.trusted = trusted;
  }

  setTrusted(trusted: boolean): void {
    if (trusted === this.trusted) return;
    this.trusted = trusted;
    this.gpus = undefined;
    this.backend = undefined;
    this.clusterCache.clear();
    void this.publishStatus();
  }

  clearClusterCache(): void {
    this.clusterCache.clear();
  }

  /** Local GPUs: detected once per trust state; never detected (no process spawned) when untrusted. */
  localGpus(): Promise<LocalGpu[]> {
    if (!this.trusted) return Promise.resolve([]);
    return (this.gpus ??= detectLocalGpus().catch((err: unknown): LocalGpu[] => {
      this.connection.console.warn(`wap: GPU detection failed: ${String(err)}`);
      return [];
    }));
  }

  /** The profiling backend trials would use: the first available one, in the profiler's order. */
  bestBackend(): Promise<{ id: string; device?: string } | undefined> {
    if (!this.trusted) return Promise.resolve(undefined);
    return (this.backend ??= availableBackends()
      .then((list) => list.find((b) => b.available))
      .then((b) => (b ? { id: String(b.id), device: b.device } : undefined))
      .catch((err: unknown) => {
        this.connection.console.warn(`wap: backend detection failed: ${String(err)}`);
        return undefined;
      }));
  }

  /** Resolves `wap.cluster` (preset, spec path relative to the workspace, or unset → local GPUs → default preset). Throws ClusterSpecError. */
  async cluster(settings: WapSettings): Promise<ResolvedCluster> {
    // 'local' needs GPU detection, which spawns nvidia-smi: untrusted, plan for the default preset and say why instead of "no GPU found".
    const untrustedLocal = settings.cluster === 'local' && !this.trusted;
    const ref = (untrustedLocal ? undefined : settings.cluster) || undefined;
    const local = !ref || ref === 'local' ? await this.localGpus() : [];
    const key = ref && ref !== 'local' ? `ref:${ref}` : `${untrustedLocal ? 'local-untrusted' : (ref ?? 'unset')}:${local.map((g) => `${g.name}/${g.memoryGB}`).join(',')}`;
    const hit = this.clusterCache.get(key);
    if (hit) return hit;
    // The planner reads an unset ref as its default preset, so detected GPUs must be asked for by name.
    const spec = resolveCluster(ref ?? (local.length ? 'local' : undefined), {
      localGpus: local.map((g) => ({ name: g.name, memoryGB: g.memoryGB })),
      readFile: (p: string) => readFileSync(this.resolvePath(p), 'utf8'),
    });
    const note = untrustedLocal
      ? UNTRUSTED_LOCAL_NOTE
      : ref
      ? `wap.cluster = ${ref}`
      : local.length
        ? `local GPUs (${local.length} detected)`
        : this.trusted
          ? 'default preset: no local GPU detected; set wap.cluster'
          : 'default preset: workspace not trusted, GPUs not detected; set wap.cluster';
    const resolved: ResolvedCluster = { spec, key, note };
    this.clusterCache.set(key, resolved);
    return resolved;
  }

  resolvePath(p: string): string {
    if (isAbsolute(p)) return p;
    for (const root of this.workspaceRoots()) {
      const candidate = resolve(root, p);
      try {
        readFileSync(candidate);
        return candidate;
      } catch {
        // try the next workspace folder
      }
    }
    return resolve(this.workspaceRoots()[0] ?? process.cwd(), p);
  }

  reportError(context: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.lastError = `${context}: ${message}`;
    this.connection.console.error(`wap: ${context}: ${err instanceof Error ? (err.stack ?? message) : message}`);
    void this.publishStatus();
  }

  clearError(): void {
    if (this.lastError === undefined) return;
    this.lastError = undefined;
    void this.publishStatus();
  }

  /** Marks a long job; the status shows "busy" while any runs. */
  async track<T>(job: () => Promise<T>): Promise<T> {
    this.busy++;
    if (this.busy === 1) void this.publishStatus();
    try {
      return await job();
    } finally {
      this.busy--;
      if (this.busy === 0) void this.publishStatus();
    }
  }

  async status(): Promise<StatusParams> {
    const gpus = await this.localGpus();
    const backend = await this.bestBackend();
    let text: string;
    const lines: string[] = [];
    if (!this.trusted) {
      text = 'restricted · analysis only';
      lines.push('Workspace not trusted: only static analysis and analytical planning run. No process is spawned (no nvidia-smi, no trials).');
    } else {
      const byName = new Map<string, number>();
      for (const g of gpus) byName.set(g.name, (byName.get(g.name) ?? 0) + 1);
      const gpuText = gpus.length ? [...byName].map(([name, n]) => `${n}× ${name.replace(/^NVIDIA\s+(GeForce\s+)?/i, '')}`).join(' + ') : 'no GPU';
      text = `${gpuText} · ${backend?.id ?? 'no backend'}`;
      lines.push(gpus.length ? `Detected GPUs: ${gpus.map((g) => `${g.index}: ${g.name} (${g.memoryGB} GB)`).join(', ')}` : 'No local GPU detected.');
      lines.push(backend ? `Profiling backend: ${backend.id}${backend.device ? ` on ${backend.device}` : ''}` : 'No profiling backend available.');
    }
    let clusterSource: string | undefined;
    let clusterName: string | undefined;
    try {
      const configured = await this.workspaceClusterSetting().catch(() => '');
      const probe = configured ? { ...DEFAULT_CLUSTER_PROBE, cluster: configured } : DEFAULT_CLUSTER_PROBE;
      const c = await this.cluster(probe);
      clusterSource = c.note;
      clusterName = (c.spec as { name?: string }).name;
      lines.push(`Plans ${probe.cluster ? `with wap.cluster = ${probe.cluster}` : 'without wap.cluster'} use: ${clusterName ?? 'cluster'} (${c.note}).`);
    } catch (err) {
      lines.push(`Cluster: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.lastError) lines.push(`Last error: ${this.lastError}`);
    return {
      // The cluster leads: it is what every plan, hover and quick-fix is computed for.
      text: `WAP: ${clusterName ? `${clusterName} · ` : ''}${text}`,
      tooltip: lines.join('\n'),
      backend: backend?.id,
      gpus: gpus.map((g) => ({ index: g.index, name: g.name, memoryGB: g.memoryGB })),
      clusterSource,
      clusterName,
      trusted: this.trusted,
      error: this.lastError,
      busy: this.busy > 0,
    };
  }

  async publishStatus(): Promise<void> {
    try {
      await this.connection.sendNotification(StatusNotification, await this.status());
    } catch (err) {
      this.connection.console.error(`wap: status failed: ${String(err)}`);
    }
  }
}

const UNTRUSTED_LOCAL_NOTE = 'default preset: wap.cluster = local, but GPU detection is off because the workspace is not trusted; trust it or choose a preset';

/** Status describes the cluster an unset `wap.cluster` gives. */
const DEFAULT_CLUSTER_PROBE: WapSettings = {
  cluster: '',
  batchSize: 1,
  objective: 'throughput',
  strategies: 'all',
  maxGpus: 0,
  optimizer: 'sgd',
  precision: 'auto',
  ampStyle: 'auto',
  weightGather: 'auto',
  framework: 'auto',
  memoryFormat: 'auto',
  recompute: 'code',
  model: '',
  profile: { enabled: false, backend: 'auto' },
  sequenceLengths: '',
  batching: 'longest',
  padMultiple: 1,
};
