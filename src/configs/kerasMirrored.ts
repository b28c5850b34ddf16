/**
 * Keras / TensorFlow: `tf.distribute.MirroredStrategy(devices=[…])`, the
 * single-machine data-parallel strategy. Without `devices` it mirrors over
 * every visible GPU, which the plan may not want.
 */
import type { Node } from 'web-tree-sitter';
import { compareLaunch, planTarget } from './compare';
import { callArgs, findCalls, malformedIfBroken, nodeRange, quoteOf, replaceWith, stringLiteral, withPythonTree } from './python';
import { MalformedConfig, type ConfigFinding, type ConfigReader, type ConfigValue, type TextEdit } from './types';

/** '/gpu:3', 'GPU:3', '/job:localhost/replica:0/task:0/device:GPU:3' → 3; CPU or other devices → undefined. */
function gpuIndex(device: string): number | undefined {
  const m = /(?:^|[/:])gpu:(\d+)$/i.exec(device.trim());
  return m ? Number(m[1]) : undefined;
}

function readDeviceList(list: Node): ConfigValue<number[]> | undefined {
  const items = list.namedChildren.filter((c) => c && c.type !== 'comment') as Node[];
  const names = items.map(stringLiteral);
  if (names.some((n) => n === undefined)) {
    if (items.some((i) => ['integer', 'float', 'true', 'false'].includes(i.type))) {
      throw new MalformedConfig('MirroredStrategy devices must be device names like "/gpu:0"', nodeRange(list));
    }
    return undefined; // names built by code: cannot check
  }
  const ids = (names as string[]).map(gpuIndex);
  if (ids.some((i) => i === undefined)) return undefined; // CPU devices: not a GPU plan
  const template = (names[0] as string).replace(/\d+$/, '{i}');
  const q = items[0] ? quoteOf(items[0]) : '"';
  return {
    value: ids as number[],
    range: nodeRange(list),
    set: (next) => replaceWith(list, `[${next.map((i) => `${q}${template.replace('{i}', String(i))}${q}`).join(', ')}]`),
  };
}

export const kerasMirroredReader: ConfigReader = {
  format: 'keras-mirrored',
  detect(fileName, text) {
    return /\.py$/i.test(fileName) && text.includes('MirroredStrategy(');
  },
  check(_fileName, text, plan) {
    return withPythonTree(text, (root) => {
      const findings: ConfigFinding[] = [];
      for (const call of findCalls(root, 'MirroredStrategy')) {
        malformedIfBroken(call, 'MirroredStrategy(…)');
        const args = callArgs(call);
        if (!args) continue;
        const devicesNode = args.keywords.get('devices') ?? args.positional[0];
        if (devicesNode && devicesNode.type !== 'list' && devicesNode.type !== 'tuple') {
          if (['integer', 'string', 'float'].includes(devicesNode.type)) throw new MalformedConfig('MirroredStrategy devices must be a list such as ["/gpu:0", "/gpu:1"]', nodeRange(devicesNode));
          continue;
        }
        const deviceIds = devicesNode ? readDeviceList(devicesNode) : undefined;
        if (devicesNode && !deviceIds) continue;
        if (!plan) continue;
        const target = planTarget(plan);
        if (target.nodes > 1) {
          findings.push({
            format: 'keras-mirrored', severity: 'warning', code: 'multi-node', range: nodeRange(call.childForFieldName('function') ?? call),
            message: `MirroredStrategy runs on one machine, but the plan uses ${target.gpus} GPUs on ${target.nodes} machines: use tf.distribute.MultiWorkerMirroredStrategy`,
          });
          continue;
        }
        if (deviceIds) {
          const range = nodeRange(devicesNode!);
          findings.push(...compareLaunch('keras-mirrored', { deviceIds, parallelism: { value: 'data', range } }, plan, (t) => `${t.gpus} devices`,
            (n) => `MirroredStrategy mirrors over ${n} GPU${n === 1 ? '' : 's'}`));
        } else {
          findings.push(...unspecifiedDevices(call, args.list, target.gpus, target.gpusPerNode, plan.cluster.name));
          const fn = call.childForFieldName('function') ?? call;
          findings.push(...compareLaunch('keras-mirrored', { parallelism: { value: 'data', range: nodeRange(fn) } }, plan, () => ''));
        }
      }
      return findings;
    });
  },
};

/** MirroredStrategy() takes every visible GPU; when the plan wants fewer, offer to name them. */
function unspecifiedDevices(call: Node, list: Node, gpus: number, gpusPerNode: number, cluster: string): ConfigFinding[] {
  if (gpus >= gpusPerNode) return [];
  const devices = `[${Array.from({ length: gpus }, (_, i) => `"/gpu:${i}"`).join(', ')}]`;
  const hasArgs = list.namedChildren.some((c) => c && c.type !== 'comment');
  const insertAt = list.endIndex - 1; // before ')'
  const edit: TextEdit = { start: insertAt, end: insertAt, newText: hasArgs ? `, devices=${devices}` : `devices=${devices}` };
  return [{
    format: 'keras-mirrored', severity: 'warning', code: 'gpu-count', range: nodeRange(call.childForFieldName('function') ?? call),
    message: `MirroredStrategy() mirrors over every visible GPU (${gpusPerNode} per machine on '${cluster}'); the plan uses ${gpus}`,
    fix: { title: `Mirror over ${gpus} GPU${gpus === 1 ? '' : 's'} as planned`, edits: [edit], preferred: true },
  }];
}
