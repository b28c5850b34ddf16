/**
 * nvidia-smi queries: the local GPUs and their interconnect matrix. Both are
 * optional: a machine without nvidia-smi simply has no GPUs to report.
 */
import { execFile } from 'node:child_process';

export interface LocalGpu {
  index: number;
  name: string;
  memoryGB: number;
  driver?: string;
}

function run(cmd: string, args: string[], timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, windowsHide: true, maxBuffer: 1 << 20 }, (err, stdout) => resolve(err ? undefined : String(stdout)));
  });
}

/** Parses `--query-gpu=index,name,memory.total,driver_version --format=csv,noheader,nounits`. */
export function parseGpuQuery(text: string): LocalGpu[] {
  const gpus: LocalGpu[] = [];
  for (const line of text.split('\n')) {
    const cells = line.split(',').map((c) => c.trim());
    if (cells.length < 3) continue;
    const index = Number(cells[0]);
    const mib = Number(cells[2]);
    if (!Number.isInteger(index) || !cells[1]) continue;
    gpus.push({ index, name: cells[1], memoryGB: Number.isFinite(mib) ? Math.round((mib / 1024) * 10) / 10 : 0, driver: cells[3] || undefined });
  }
  return gpus;
}

export async function detectLocalGpus(): Promise<LocalGpu[]> {
  const out = await run('nvidia-smi', ['--query-gpu=index,name,memory.total,driver_version', '--format=csv,noheader,nounits']);
  return out ? parseGpuQuery(out) : [];
}

export async function readGpuTopology(): Promise<string | undefined> {
  const out = await run('nvidia-smi', ['topo', '-m']);
  return out?.trim() ? out : undefined;
}

/** Link kinds in `nvidia-smi topo -m`, with a nominal per-direction bandwidth (GB/s) and latency (µs). */
const NOMINAL: Record<string, { bandwidthGBs: number; alphaUs: number }> = {
  PIX: { bandwidthGBs: 24, alphaUs: 8 },
  PXB: { bandwidthGBs: 20, alphaUs: 9 },
  PHB: { bandwidthGBs: 16, alphaUs: 10 },
  NODE: { bandwidthGBs: 12, alphaUs: 12 },
  SYS: { bandwidthGBs: 10, alphaUs: 15 },
};

/** GPU-pair links from the topology matrix (NV# = # NVLinks at ~25 GB/s each). */
export function parseTopology(text: string): Array<{ a: number; b: number; kind: string; bandwidthGBs: number; alphaUs: number }> {
  const lines = text.split('\n').filter((l) => /^GPU\d+\s/.test(l.trim()));
  const links: Array<{ a: number; b: number; kind: string; bandwidthGBs: number; alphaUs: number }> = [];
  for (const line of lines) {
    const cells = line.trim().split(/\s+/);
    const a = Number(cells[0]!.slice(3));
    for (let b = 0; b < lines.length; b++) {
      const cell = cells[b + 1];
      if (!cell || b <= a || cell === 'X') continue;
      const nv = /^NV(\d+)$/.exec(cell);
      const nominal = nv ? { bandwidthGBs: 25 * Number(nv[1]), alphaUs: 3 } : NOMINAL[cell];
      if (nominal) links.push({ a, b, kind: cell, ...nominal });
    }
  }
  return links;
}
