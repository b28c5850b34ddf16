/**
 * PyTorch Lightning: `Trainer(devices=…, num_nodes=…, strategy=…)` in a
 * training script. Values that are expressions (args.gpus, os.environ[…]) are
 * left alone: WAP cannot know them without running the code.
 */
import type { Node } from 'web-tree-sitter';
import { compareLaunch } from './compare';
import { readLightningSetup } from './lightningSetup';
import { withLaunchedWorld } from './launchedBy';
import { withLinkedConfig } from './linkedConfig';
import { compareSetup, setupNotes, type StatedSetup } from './setup';
import { callArgs, findCalls, intLiteral, malformedIfBroken, nodeRange, quoteOf, replaceWith, stringLiteral, withPythonTree } from './python';
import { MalformedConfig, type ConfigFinding, type ConfigReader, type ConfigValue, type LaunchSettings } from './types';

type Kind = NonNullable<LaunchSettings['parallelism']>['value'];

/** How a strategy name parallelises (LaunchSettings.parallelism): one reading for the Trainer call and its YAML. */
export function strategyKind(name: string): Kind {
  const s = name.toLowerCase();
  if (s.startsWith('deepspeed') || s.startsWith('fsdp')) return 'sharded';
  if (s === 'auto' || s === 'dp' || s.startsWith('ddp')) return 'data';
  if (s === 'single_device') return 'single';
  return 'other';
}

/** The same for a strategy class (`FSDPStrategy(…)` in code, its `class_path` in YAML). */
export const STRATEGY_CLASSES: Record<string, Kind> = {
  DDPStrategy: 'data', DataParallelStrategy: 'data', FSDPStrategy: 'sharded', DeepSpeedStrategy: 'sharded',
  SingleDeviceStrategy: 'single', ModelParallelStrategy: 'other',
};

function readDevices(value: Node): Pick<LaunchSettings, 'perNode' | 'deviceIds'> {
  const range = nodeRange(value);
  const n = intLiteral(value);
  if (n !== undefined) return n >= 1 ? { perNode: { value: n, range, set: (k) => replaceWith(value, String(k)) } } : {};
  if (value.type === 'list') {
    const items = value.namedChildren.filter((c) => c && c.type !== 'comment') as Node[];
    const ids = items.map(intLiteral);
    if (ids.some((i) => i === undefined)) {
      if (items.every((i) => i.type === 'integer' || i.type === 'string' || i.type === 'float')) throw new MalformedConfig('Trainer devices=[…] must list GPU indices (whole numbers)', range);
      return {};
    }
    return { deviceIds: { value: ids as number[], range, set: (next) => replaceWith(value, `[${next.join(', ')}]`) } };
  }
  const s = stringLiteral(value);
  if (s !== undefined) {
    const q = quoteOf(value);
    const t = s.trim();
    if (t === 'auto' || t === '-1') return {};
    if (/^\d+$/.test(t)) return { perNode: { value: Number(t), range, set: (k) => replaceWith(value, `${q}${k}${q}`) } };
    if (/^\d+(\s*,\s*\d+)*\s*,?$/.test(t)) {
      const ids = t.split(',').map((x) => x.trim()).filter(Boolean).map(Number);
      return { deviceIds: { value: ids, range, set: (next) => replaceWith(value, `${q}${next.join(',')}${next.length === 1 ? ',' : ''}${q}`) } };
    }
    throw new MalformedConfig(`Trainer devices must be a count, a list of GPU indices or "auto", got ${value.text}`, range);
  }
  if (['float', 'true', 'false', 'none', 'dictionary', 'set'].includes(value.type)) {
    throw new MalformedConfig(`Trainer devices must be a count, a list of GPU indices or "auto", got ${value.text}`, range);
  }
  return {};
}

function readNodes(value: Node): ConfigValue<number> | undefined {
  const n = intLiteral(value);
  if (n !== undefined) return n >= 1 ? { value: n, range: nodeRange(value), set: (k) => replaceWith(value, String(k)) } : undefined;
  if (['string', 'float', 'true', 'false', 'list'].includes(value.type)) throw new MalformedConfig(`Trainer num_nodes must be a whole number, got ${value.text}`, nodeRange(value));
  return undefined;
}

function readStrategy(value: Node | undefined): ConfigValue<Kind> | undefined {
  if (!value) return undefined;
  const s = stringLiteral(value);
  if (s !== undefined) return { value: strategyKind(s), range: nodeRange(value) };
  if (value.type === 'call') {
    const fn = value.childForFieldName('function');
    const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    const kind = name ? STRATEGY_CLASSES[name] : undefined;
    return kind ? { value: kind, range: nodeRange(value) } : undefined;
  }
  return undefined;
}

export const lightningReader: ConfigReader = {
  format: 'lightning',
  detect(fileName, text) {
    return /\.py$/i.test(fileName) && text.includes('Trainer(') && /\b(lightning|pytorch_lightning)\b/.test(text);
  },
  check(fileName, text, plan, files) {
    return withPythonTree(text, (root) => {
      const findings: ConfigFinding[] = [];
      for (const call of findCalls(root, 'Trainer')) {
        malformedIfBroken(call, 'Trainer(…)');
        const args = callArgs(call);
        if (!args) continue;
        const accelerator = args.keywords.get('accelerator');
        const acc = accelerator && stringLiteral(accelerator);
        if (acc !== undefined && acc !== 'gpu' && acc !== 'cuda' && acc !== 'auto') continue; // CPU/TPU runs are not GPU plans
        const devices = args.keywords.get('devices');
        const launch: LaunchSettings = {
          ...(devices ? readDevices(devices) : {}),
          nodes: args.keywords.get('num_nodes') && readNodes(args.keywords.get('num_nodes')!),
        };
        const world = launch.perNode?.value ?? launch.deviceIds?.value.length;
        // No strategy means "auto", which is DDP as soon as there is more than one device.
        launch.parallelism = readStrategy(args.keywords.get('strategy')) ??
          (devices && world && world > 1 ? { value: 'data', range: nodeRange(devices) } : undefined);
        if (plan) {
          const stated = withLaunchedWorld(fileName, withLinkedConfig(fileName, readLightningSetup(text, args, world && world * (launch.nodes?.value ?? 1)), files), files);
          findings.push(...compareSetup('lightning', text, stated, plan));
          findings.push(...compareLaunch('lightning', launch, plan, (t) => `devices=${t.perNode ?? t.gpus}${t.nodes > 1 ? `, num_nodes=${t.nodes}` : ''}`));
        } else findings.push(...setupNotes('lightning', withLinkedConfig(fileName, readLightningSetup(text, args, world), files)));
      }
      return findings;
    });
  },
  readSetup(_fileName, text) {
    return withPythonTree(text, (root): StatedSetup | undefined => {
      for (const call of findCalls(root, 'Trainer')) {
        const args = callArgs(call);
        if (!args) continue;
        const devices = args.keywords.get('devices');
        const d = devices ? readDevices(devices) : {};
        const nodes = args.keywords.get('num_nodes') && readNodes(args.keywords.get('num_nodes')!);
        const perNode = d.perNode?.value ?? d.deviceIds?.value.length;
        return readLightningSetup(text, args, perNode && perNode * (nodes?.value ?? 1));
      }
      return undefined;
    });
  },
};
