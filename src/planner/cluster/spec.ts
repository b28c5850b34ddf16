/**
 * Cluster specs: the normalised shape the planner works on, and the parser
 * that accepts the JSON forms documented in docs/clusters.md. Every error
 * names the offending field so a user can fix their file in one go.
 */

/** Dense (non-sparse) peak TFLOP/s per precision; fp32 is always present (= `tflops`). Tensor-core rates for the others. */
export interface PeakTflops {
  fp32: number;
  tf32?: number;
  fp16?: number;
  bf16?: number;
  fp8?: number;
}

export const PEAK_PRECISIONS = ['fp32', 'tf32', 'fp16', 'bf16', 'fp8'] as const;

export interface GpuSpec {
  /** Global index within the cluster, 0-based, node-major. */
  index: number;
  node: number;
  name: string;
  /** Peak dense fp32 TFLOP/s (CUDA cores, no tensor cores). */
  tflops: number;
  /** Per-precision dense peaks as given in the spec (fp32 = tflops); a missing one is looked up by GPU name or refused. */
  peakTflops: PeakTflops;
  /** Host↔GPU bandwidth (PCIe) one GPU can use, GB/s; offload pays it. Absent: DEFAULT_HOST_BANDWIDTH_GBS (cost/tables.ts). */
  hostBandwidthGBs?: number;
  /**
   * Host DRAM bandwidth one GPU's rank gets, GB/s: the node's peak shared evenly by its GPUs, since every rank steps
   * its offloaded optimizer shard on the CPU at once. Prices the CPU optimizer step (cost/compute.ts hostUpdateMs);
   * absent, that step is not modelled and the plan says so.
   */
  hostMemoryBandwidthGBs?: number;
  /**
   * Host memory one GPU's rank may fill with what it offloads, binary GB (GiB, as DIMMs are sized): the node's RAM
   * over its GPUs. Offload plans must fit it (hostMemoryBytes); absent, it is not checked and the plan says so.
   */
  hostMemoryGB?: number;
  /** Streaming multiprocessors: how many GEMM tiles run at once (wave quantization, cost/efficiency.ts). */
  sms?: number;
  /**
   * Per precision, the fraction of its peak the best large GEMM reaches on this GPU, as measured (e.g. with
   * ml-engineering's mamf-finder.py); absent, a cited measurement for the GPU or the default (cost/gemmCeiling.ts).
   */
  gemmEfficiency?: Partial<Record<keyof PeakTflops, number>>;
  /** Device memory as datasheets and nvidia-smi state it: binary gigabytes (GiB); see gpuMemoryBytes. */
  memoryGB: number;
  memoryBandwidthGBs: number;
  powerW: number;
  idlePowerW: number;
}

/**
 * A GPU's memory in bytes. Datasheet capacities are binary: HBM stacks come in
 * powers of two, and nvidia-smi's `memory.total` (MiB) reports an
 * A100-SXM4-80GB as 81920 MiB = 80 GiB = 85.9e9 bytes. Reading "80 GB" as 80e9
 * left 7% of every device unused, and disagreed with the local GPUs WAP reads
 * from nvidia-smi (MiB / 1024).
 */
export const gpuMemoryBytes = (gpu: Pick<GpuSpec, 'memoryGB'>): number => gpu.memoryGB * 2 ** 30;

/** The host memory the least-provisioned of `gpus` may fill with offloaded state, bytes; undefined when any spec omits it. */
export function hostMemoryBytes(gpus: ReadonlyArray<Pick<GpuSpec, 'hostMemoryGB'>>): number | undefined {
  let least = Infinity;
  for (const g of gpus) {
    if (g.hostMemoryGB === undefined) return undefined;
    least = Math.min(least, g.hostMemoryGB * 2 ** 30);
  }
  return Number.isFinite(least) ? least : undefined;
}

export interface LinkSpec {
  /** Per-GPU unidirectional bandwidth a collective can use, GB/s. */
  bandwidthGBs: number;
  latencyUs: number;
  /** Lane name used in timelines ('pcie', 'nvlink', 'ib'); optional in input. */
  name?: string;
  /**
   * Whether GPUs on this link reach each other directly (NVLink, PCIe P2P).
   * false: transfers are staged through host memory (consumer GPUs, or P2P
   * disabled), which halves what a hop delivers (see cost/collectives.ts).
   * Absent means true.
   */
  p2p?: boolean;
}

export interface ClusterSpec {
  name: string;
  /** 'preset:<id>' | 'file:<path>' | 'local' | 'inline' | 'default'. */
  source: string;
  nodes: number;
  gpus: GpuSpec[];
  intraNode: LinkSpec;
  interNode: LinkSpec;
}

export class ClusterSpecError extends Error {
  override name = 'ClusterSpecError';
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(o: Obj, key: string, path: string, opts: { positive?: boolean; integer?: boolean; optional?: number } = {}): number {
  const v = o[key];
  if (v === undefined && opts.optional !== undefined) return opts.optional;
  const where = `${path}${key}`;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new ClusterSpecError(`${where} must be a ${opts.positive ? 'positive ' : ''}${opts.integer ? 'integer' : 'number'}`);
  }
  if (opts.integer && !Number.isInteger(v)) throw new ClusterSpecError(`${where} must be a ${opts.positive ? 'positive' : 'non-negative'} integer`);
  if (opts.positive ? v <= 0 : v < 0) throw new ClusterSpecError(`${where} must be a ${opts.positive ? 'positive' : 'non-negative'} ${opts.integer ? 'integer' : 'number'}`);
  return v;
}

function str(o: Obj, key: string, path: string, fallback?: string): string {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string' || v.trim() === '') throw new ClusterSpecError(`${path}${key} must be a non-empty string`);
  return v;
}

type GpuModel = Omit<GpuSpec, 'index' | 'node'>;

function parseGpu(v: unknown, path: string): GpuModel {
  if (!isObj(v)) throw new ClusterSpecError(`${path.replace(/\.$/, '')} must be an object`);
  const powerW = num(v, 'powerW', path, { positive: true, optional: 300 });
  const peaks = parsePeaks(v.peakTflops, `${path}peakTflops`);
  const tflops = peaks?.fp32 !== undefined && v.tflops === undefined ? peaks.fp32 : num(v, 'tflops', path, { positive: true });
  if (peaks?.fp32 !== undefined && peaks.fp32 !== tflops) throw new ClusterSpecError(`${path}peakTflops.fp32 (${peaks.fp32}) must equal ${path}tflops (${tflops}), the fp32 peak`);
  const gpu: GpuModel = {
    name: str(v, 'name', path, 'GPU'),
    tflops,
    peakTflops: { ...peaks, fp32: tflops },
    memoryGB: num(v, 'memoryGB', path, { positive: true }),
    memoryBandwidthGBs: num(v, 'memoryBandwidthGBs', path, { positive: true }),
    powerW,
    idlePowerW: num(v, 'idlePowerW', path, { optional: Math.round(powerW * 0.2) }),
  };
  if (v.hostBandwidthGBs !== undefined) gpu.hostBandwidthGBs = num(v, 'hostBandwidthGBs', path, { positive: true });
  if (v.hostMemoryBandwidthGBs !== undefined) gpu.hostMemoryBandwidthGBs = num(v, 'hostMemoryBandwidthGBs', path, { positive: true });
  if (v.hostMemoryGB !== undefined) gpu.hostMemoryGB = num(v, 'hostMemoryGB', path, { positive: true });
  if (v.sms !== undefined) gpu.sms = num(v, 'sms', path, { positive: true, integer: true });
  if (v.gemmEfficiency !== undefined) gpu.gemmEfficiency = parseGemmEfficiency(v.gemmEfficiency, `${path}gemmEfficiency`);
  if (gpu.idlePowerW > gpu.powerW) throw new ClusterSpecError(`${path}idlePowerW must not exceed ${path}powerW`);
  return gpu;
}

/** `peakTflops: { fp32?, tf32?, fp16?, bf16?, fp8? }`, each a positive number; unknown keys are refused (a typo would silently fall back). */
function parsePeaks(v: unknown, path: string): Partial<PeakTflops> | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) throw new ClusterSpecError(`${path} must be an object like { "fp32": 19.5, "bf16": 312 }`);
  const out: Partial<PeakTflops> = {};
  for (const key of Object.keys(v)) {
    if (!(PEAK_PRECISIONS as readonly string[]).includes(key)) throw new ClusterSpecError(`${path}.${key} is not a precision; use ${PEAK_PRECISIONS.join(', ')}`);
    out[key as keyof PeakTflops] = num(v, key, `${path}.`, { positive: true });
  }
  return out;
}

/** `gemmEfficiency: { bf16?: 0.8, ... }`: fractions in (0, 1], keyed by precision (a fraction above 1 would beat the peak). */
function parseGemmEfficiency(v: unknown, path: string): Partial<Record<keyof PeakTflops, number>> {
  if (!isObj(v)) throw new ClusterSpecError(`${path} must be an object like { "bf16": 0.8 }: the fraction of each precision's peak a large GEMM reaches`);
  const out: Partial<Record<keyof PeakTflops, number>> = {};
  for (const key of Object.keys(v)) {
    if (!(PEAK_PRECISIONS as readonly string[]).includes(key)) throw new ClusterSpecError(`${path}.${key} is not a precision; use ${PEAK_PRECISIONS.join(', ')}`);
    const f = num(v, key, `${path}.`, { positive: true });
    if (f > 1) throw new ClusterSpecError(`${path}.${key} must be a fraction of the peak, in (0, 1] (got ${f})`);
    out[key as keyof PeakTflops] = f;
  }
  return out;
}

function parseLink(v: unknown, path: string, fallback?: LinkSpec): LinkSpec {
  if (v === undefined && fallback) return fallback;
  if (!isObj(v)) throw new ClusterSpecError(`${path} must be an object with bandwidthGBs and latencyUs`);
  const link: LinkSpec = {
    bandwidthGBs: num(v, 'bandwidthGBs', `${path}.`, { positive: true }),
    latencyUs: num(v, 'latencyUs', `${path}.`, { optional: 0 }),
  };
  if (v.name !== undefined) link.name = str(v, 'name', `${path}.`);
  if (v.p2p !== undefined) {
    if (typeof v.p2p !== 'boolean') throw new ClusterSpecError(`${path}.p2p must be true or false`);
    link.p2p = v.p2p;
  }
  return link;
}

/** A list of `{ ...gpu, count }` entries, as used by `nodes[i].gpus` and `groups`. */
function parseGpuGroups(v: unknown, path: string): GpuModel[] {
  if (!Array.isArray(v) || v.length === 0) throw new ClusterSpecError(`${path} must be a non-empty array of GPU groups`);
  const out: GpuModel[] = [];
  v.forEach((g, i) => {
    const p = `${path}[${i}].`;
    const model = parseGpu(g, p);
    const count = num(g as Obj, 'count', p, { positive: true, integer: true, optional: 1 });
    for (let c = 0; c < count; c++) out.push(model);
  });
  return out;
}

const MAX_GPUS = 4096;

/**
 * Accepts three forms (see docs/clusters.md):
 * - simple: `{ name, nodes, gpusPerNode, gpu, intraNode, interNode }`
 * - heterogeneous nodes: `{ name, nodes: [{ gpus: [{ ...gpu, count }] }], intraNode, interNode }`
 * - groups: `{ name, groups: [{ ...gpu, count, node? }], intraNode, interNode }`
 */
export function parseClusterSpec(json: unknown, sourceName: string): ClusterSpec {
  if (!isObj(json)) throw new ClusterSpecError('cluster spec must be a JSON object');
  const name = str(json, 'name', '', 'cluster');
  const intraNode = parseLink(json.intraNode, 'intraNode');
  let perNode: GpuModel[][];
  if (Array.isArray(json.nodes)) {
    if (json.nodes.length === 0) throw new ClusterSpecError('nodes must be a non-empty array');
    perNode = json.nodes.map((n, i) => {
      if (!isObj(n)) throw new ClusterSpecError(`nodes[${i}] must be an object with a gpus array`);
      return parseGpuGroups(n.gpus, `nodes[${i}].gpus`);
    });
  } else if (json.groups !== undefined) {
    if (!Array.isArray(json.groups) || json.groups.length === 0) throw new ClusterSpecError('groups must be a non-empty array of GPU groups');
    const byNode = new Map<number, GpuModel[]>();
    json.groups.forEach((g, i) => {
      const node = isObj(g) ? num(g, 'node', `groups[${i}].`, { integer: true, optional: 0 }) : 0;
      const p = `groups[${i}].`;
      const model = parseGpu(g, p);
      const count = num(g as Obj, 'count', p, { positive: true, integer: true, optional: 1 });
      const list = byNode.get(node) ?? [];
      for (let c = 0; c < count; c++) list.push(model);
      byNode.set(node, list);
    });
    perNode = [...byNode.keys()].sort((a, b) => a - b).map((k) => byNode.get(k)!);
  } else {
    const nodes = num(json, 'nodes', '', { positive: true, integer: true, optional: 1 });
    const gpusPerNode = num(json, 'gpusPerNode', '', { positive: true, integer: true });
    if (nodes * gpusPerNode > MAX_GPUS) throw new ClusterSpecError(`nodes × gpusPerNode must be at most ${MAX_GPUS}`);
    const gpu = parseGpu(json.gpu, 'gpu.');
    perNode = Array.from({ length: nodes }, () => Array.from({ length: gpusPerNode }, () => gpu));
  }
  const interNode = parseLink(json.interNode, 'interNode', perNode.length === 1 ? intraNode : undefined);
  const gpus: GpuSpec[] = [];
  perNode.forEach((list, node) => list.forEach((g) => gpus.push({ ...g, index: gpus.length, node })));
  if (gpus.length > MAX_GPUS) throw new ClusterSpecError(`a cluster may have at most ${MAX_GPUS} GPUs`);
  return { name, source: sourceName, nodes: perNode.length, gpus, intraNode, interNode };
}
