/** Turns a user's cluster reference (preset id, 'local', file path, inline object) into a ClusterSpec. */
import { CLUSTER_PRESETS, DEFAULT_PRESET } from './presets';
import { ClusterSpecError, parseClusterSpec, type ClusterSpec } from './spec';

export interface ResolveContext {
  /** From the profiler's nvidia-smi probe; the planner never spawns processes itself. */
  localGpus?: Array<{ name: string; memoryGB: number }>;
  /** Reads a spec file; supplied by the caller so the planner stays free of fs. */
  readFile?: (path: string) => string;
}

/** Datasheet numbers for GPUs nvidia-smi may report, matched by substring of the name. */
const KNOWN_GPUS: Array<{ match: RegExp; tflops: number; memoryBandwidthGBs: number; powerW: number; idlePowerW: number }> = [
  { match: /H200/i, tflops: 67, memoryBandwidthGBs: 4800, powerW: 700, idlePowerW: 75 },
  { match: /H100/i, tflops: 67, memoryBandwidthGBs: 3350, powerW: 700, idlePowerW: 70 },
  { match: /A100/i, tflops: 19.5, memoryBandwidthGBs: 2039, powerW: 400, idlePowerW: 50 },
  { match: /V100/i, tflops: 15.7, memoryBandwidthGBs: 900, powerW: 300, idlePowerW: 40 },
  { match: /L40S/i, tflops: 91.6, memoryBandwidthGBs: 864, powerW: 350, idlePowerW: 35 },
  { match: /A10\b/i, tflops: 31.2, memoryBandwidthGBs: 600, powerW: 150, idlePowerW: 20 },
  { match: /T4\b/i, tflops: 8.1, memoryBandwidthGBs: 320, powerW: 70, idlePowerW: 10 },
  { match: /4090/i, tflops: 82.6, memoryBandwidthGBs: 1008, powerW: 450, idlePowerW: 25 },
  { match: /3090/i, tflops: 35.6, memoryBandwidthGBs: 936, powerW: 350, idlePowerW: 25 },
  { match: /TITAN Xp/i, tflops: 12.1, memoryBandwidthGBs: 547.7, powerW: 250, idlePowerW: 60 },
];

/** Consumer boards, as nvidia-smi names them ("NVIDIA GeForce RTX 4090", "NVIDIA TITAN Xp"). */
const CONSUMER_GPU = /GeForce|TITAN/i;

function localCluster(gpus: ResolveContext['localGpus']): ClusterSpec {
  if (!gpus || gpus.length === 0) {
    throw new ClusterSpecError(`no local GPUs detected (nvidia-smi not found or reported none); choose a preset (${Object.keys(CLUSTER_PRESETS).join(', ')}) or a cluster spec file`);
  }
  const groups = gpus.map((g) => {
    const known = KNOWN_GPUS.find((k) => k.match.test(g.name));
    // Unknown boards get conservative mid-range numbers; the docs say to write a spec file for accuracy.
    const base = known ?? { tflops: 10, memoryBandwidthGBs: 500, powerW: 250, idlePowerW: 30 };
    return { name: g.name, memoryGB: g.memoryGB, tflops: base.tflops, memoryBandwidthGBs: base.memoryBandwidthGBs, powerW: base.powerW, idlePowerW: base.idlePowerW, count: 1 };
  });
  // GeForce and TITAN boards generally lack PCIe peer-to-peer (the driver disables it on GeForce RTX 30/40 boards;
  // consumer platforms rarely enable it), so their collectives are host-staged; datacenter boards keep it.
  const p2p = !gpus.some((g) => CONSUMER_GPU.test(g.name));
  return parseClusterSpec({ name: `local (${gpus.length}x ${gpus[0].name})`, groups, intraNode: { bandwidthGBs: 10, latencyUs: 10, name: 'pcie', p2p } }, 'local');
}

export function resolveCluster(ref: string | object | undefined, context: ResolveContext = {}): ClusterSpec {
  // Presets are shared module state: each caller gets its own copy, so no caller's edit can reach another plan.
  if (ref === undefined || ref === '') return { ...structuredClone(CLUSTER_PRESETS[DEFAULT_PRESET].spec), source: 'default' };
  if (typeof ref === 'object') return parseClusterSpec(ref, 'inline');
  if (typeof ref !== 'string') throw new ClusterSpecError('cluster must be a preset id, "local", a file path or an object');
  const preset = CLUSTER_PRESETS[ref];
  if (preset) return structuredClone(preset.spec);
  if (ref === 'local') return localCluster(context.localGpus);
  const looksLikePath = /[\\/.]/.test(ref);
  if (!looksLikePath || !context.readFile) {
    throw new ClusterSpecError(`unknown cluster '${ref}': use a preset (${Object.keys(CLUSTER_PRESETS).join(', ')}), 'local' or a JSON spec file`);
  }
  let text: string;
  try {
    text = context.readFile(ref);
  } catch (err) {
    throw new ClusterSpecError(`cannot read cluster spec '${ref}': ${err instanceof Error ? err.message : String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ClusterSpecError(`cluster spec '${ref}' is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseClusterSpec(json, `file:${ref}`);
}
