/**
 * A Lightning Trainer written as YAML, the way most Lightning projects keep it: LightningCLI's `config.yaml`
 * (`trainer:` beside `model:` and `data:`, Lightning docs "Configure hyperparameters from the CLI") and a Hydra
 * trainer group (`_target_: lightning.pytorch.trainer.Trainer`, or a file in a `trainer/` group folder that states
 * the Trainer's keys, as lightning-hydra-template's `ddp.yaml` and `gpu.yaml` extend `default.yaml`). Read: devices × num_nodes, strategy by name (ddp, deepspeed_stage_N
 * [_offload], fsdp[_cpu_offload]), precision and accumulate_grad_batches; the plan's values written back where the
 * Trainer has words for them (a key the file lacks is added to the trainer's mapping).
 */
import { isScalar, isSeq, type Document, type Scalar } from 'yaml';
import { lightningPrecision } from '../core/trainingPrecision';
import type { ZeroStage } from '../protocol/plan';
import { compareLaunch } from './compare';
import { STRATEGY_CLASSES, strategyKind } from './lightning';
import { FSDP_SHARDING, fsdpShardingFor } from './fsdpStrategy';
import { LIGHTNING_ELSEWHERE, LIGHTNING_PRECISION_TEXT, LIGHTNING_RECOMPUTE_ELSEWHERE } from './lightningSetup';
import { withLaunchedWorld } from './launchedBy';
import { compareSetup, setupNotes, type StatedSetup } from './setup';
import type { ConfigFinding, ConfigReader, LaunchSettings, TextEdit } from './types';
import { insertYamlKey, mapAt, nestedScalar, parseYamlConfig, setScalar, valueRange } from './yamlDoc';
import { DEEPSPEED_WEIGHT_GATHER, FSDP_WEIGHT_GATHER, lightningDeepSpeedSerialSync } from './frameworkTimings';
import { LIGHTNING_FSDP_ACCUMULATION } from './unshardedAccumulation';

const TRAINER_PATH = '(lightning\\.pytorch|pytorch_lightning|lightning)(\\.trainer){0,2}\\.Trainer';
const TRAINER_TARGET = new RegExp(`^${TRAINER_PATH}$`);
/** The same `_target_` as a line of the file's text, for detection before parsing. */
const TRAINER_TARGET_LINE = new RegExp(`^_target_:\\s*['"]?${TRAINER_PATH}['"]?\\s*$`, 'm');
const TRAINER_KEYS = /^[ \t]+(devices|num_nodes|strategy|precision|accumulate_grad_batches)[ \t]*:/m;

/**
 * A Hydra trainer group file by its place (`configs/trainer/ddp.yaml`): lightning-hydra-template's variants name no
 * `_target_` of their own (they extend `default` through their defaults list) but state the Trainer's keys.
 */
const TRAINER_GROUP_FILE = /(^|[\\/])trainer[\\/][^\\/]+\.ya?ml$/i;
const TOP_TRAINER_KEYS = /^(devices|num_nodes|strategy|precision|accumulate_grad_batches)[ \t]*:/m;

/** Where the Trainer's keys are: the document itself (a Hydra trainer group) or its `trainer:` section (LightningCLI). */
function trainerPath(doc: Document.Parsed, fileName: string): string[] | undefined {
  const target = nestedScalar(doc, [], '_target_');
  if (target && TRAINER_TARGET.test(String(target.value))) return [];
  if (TRAINER_GROUP_FILE.test(fileName) && !target) return [];
  if (mapAt(doc, ['trainer'])) return ['trainer'];
  // A config given before the subcommand holds it as a section (`fit: {trainer: …}`).
  if (mapAt(doc, ['fit', 'trainer'])) return ['fit', 'trainer'];
  return undefined;
}

/** `key`'s scalar in the trainer's mapping, and how to write a value there (replaced, or added when absent). */
function trainerKey(text: string, doc: Document.Parsed, path: string[], key: string): { node?: Scalar; write: (value: string) => TextEdit[] | undefined } {
  const node = nestedScalar(doc, path, key);
  return { node, write: (value) => (node ? setScalar(node, value) : insertYamlKey(text, doc, path, key, value)) };
}

const count = (node: Scalar | undefined): number | undefined => {
  const n = typeof node?.value === 'number' ? node.value : typeof node?.value === 'string' && /^\d+$/.test(node.value) ? Number(node.value) : undefined;
  return n !== undefined && Number.isInteger(n) && n >= 1 ? n : undefined;
};

function readSetup(text: string, doc: Document.Parsed, path: string[], world: number | undefined): StatedSetup {
  const anchor = { start: 0, end: Math.min(text.length, Math.max(0, text.indexOf('\n'))) };
  const stated: StatedSetup = {
    label: 'Lightning Trainer YAML', anchor, world,
    inexpressible: { tensorParallel: LIGHTNING_ELSEWHERE, pipelineStages: LIGHTNING_ELSEWHERE, contextParallel: LIGHTNING_ELSEWHERE, sequenceParallel: LIGHTNING_ELSEWHERE, recompute: LIGHTNING_RECOMPUTE_ELSEWHERE },
  };
  const precision = trainerKey(text, doc, path, 'precision');
  const read = precision.node ? lightningPrecision(String(precision.node.value)) : { precision: 'fp32' as const };
  if (read) {
    stated.precision = { value: read.precision, stated: !!precision.node, range: precision.node ? valueRange(precision.node) : anchor, set: (p) => precision.write(LIGHTNING_PRECISION_TEXT[p]) };
    if (read.holding) stated.ampStyle = { value: read.holding, why: `precision ${String(precision.node!.value)}` };
  }
  const accumulation = trainerKey(text, doc, path, 'accumulate_grad_batches');
  const steps = accumulation.node ? count(accumulation.node) : 1;
  if (steps !== undefined) {
    stated.gradientAccumulation = { value: steps, stated: !!accumulation.node, range: accumulation.node ? valueRange(accumulation.node) : anchor, set: (n) => accumulation.write(String(n)) };
  }
  if (readStrategyClass(text, doc, path, stated)) return stated;
  const strategy = trainerKey(text, doc, path, 'strategy');
  const name = strategy.node ? String(strategy.node.value) : 'auto';
  const range = strategy.node ? valueRange(strategy.node) : anchor;
  // One name says the stage and the offload; a stage is written as the name that has it (offload kept).
  const sharded = /^deepspeed(?:_stage_(\d))?(_offload)?$/.exec(name);
  const fsdp = /^fsdp(_cpu_offload)?$/.exec(name);
  const offload = !!sharded?.[2] || !!fsdp?.[1];
  const zero = (/^(ddp\w*|auto|dp)$/.test(name) ? 0 : sharded ? Number(sharded[1] ?? 2) : fsdp ? 3 : undefined) as ZeroStage | undefined;
  if (zero !== undefined && zero <= 3) {
    const nameFor = (z: ZeroStage): string | undefined => (z === 0 ? (offload ? undefined : 'ddp') : z === 3 && fsdp ? `fsdp${offload ? '_cpu_offload' : ''}` : `deepspeed_stage_${z}${offload ? '_offload' : ''}`);
    stated.zeroStage = { value: zero, stated: !!strategy.node, range, set: (z) => { const n = nameFor(z); return n ? strategy.write(n) : undefined; } };
    stated.cpuOffload = { value: offload, stated: !!strategy.node, range };
    stated.paramOffload = { value: offload && zero === 3, stated: !!strategy.node, range };
  }
  if (sharded) Object.assign(stated, { serialSync: lightningDeepSpeedSerialSync(undefined), weightGather: DEEPSPEED_WEIGHT_GATHER });
  return stated;
}

/**
 * A strategy written as jsonargparse's class mapping (`strategy: {class_path: …FSDPStrategy, init_args: {…}}`, how
 * LightningCLI configs pass one with arguments): FSDP's sharding_strategy (FULL_SHARD when absent) and cpu_offload,
 * or DeepSpeed's stage (2 when absent) and offloads. False when the strategy is not such a mapping.
 */
function readStrategyClass(text: string, doc: Document.Parsed, path: string[], stated: StatedSetup): boolean {
  const at = [...path, 'strategy'];
  const cls = nestedScalar(doc, at, 'class_path');
  if (!cls) return false;
  const name = String(cls.value).replace(/^.*\./, '');
  const args = [...at, 'init_args'];
  const arg = (key: string) => trainerKey(text, doc, args, key);
  const range = valueRange(cls);
  const flag = (key: string): boolean => arg(key).node?.value === true;
  if (name === 'FSDPStrategy') {
    const sharding = arg('sharding_strategy');
    const shard = FSDP_SHARDING[sharding.node ? String(sharding.node.value).replace(/^.*\./, '') : 'FULL_SHARD'];
    if (shard) {
      const where = sharding.node ? valueRange(sharding.node) : range;
      stated.zeroStage = { value: shard.zero, stated: !!sharding.node, range: where, set: (z, plan) => { const m = fsdpShardingFor(z, plan?.hybridShard ?? shard.hybrid); return m ? sharding.write(m) : undefined; } };
      stated.hybridShard = { value: shard.hybrid, stated: !!sharding.node, range: where, set: (h, plan) => { const m = fsdpShardingFor(plan?.zeroStage ?? shard.zero, h); return m ? sharding.write(m) : undefined; } };
      stated.weightGather = FSDP_WEIGHT_GATHER;
    }
    stated.unshardedAccumulation = LIGHTNING_FSDP_ACCUMULATION;
    // Lightning hands cpu_offload to FSDP as CPUOffload(offload_params=…): parameters, gradients and optimizer move.
    const offload = flag('cpu_offload');
    stated.cpuOffload = { value: offload, stated: !!arg('cpu_offload').node, range };
    stated.paramOffload = { value: offload, stated: !!arg('cpu_offload').node, range };
    const policy = arg('activation_checkpointing_policy').node ?? arg('activation_checkpointing').node;
    if (policy) stated.recompute = { value: 'full', stated: true, range: valueRange(policy), matches: (r) => r !== 'none' };
    return true;
  }
  if (name === 'DeepSpeedStrategy') {
    const stage = arg('stage');
    const z = stage.node ? count(stage.node) ?? (stage.node.value === 0 ? 0 : undefined) : 2;
    if (z !== undefined && z <= 3) stated.zeroStage = { value: z as ZeroStage, stated: !!stage.node, range: stage.node ? valueRange(stage.node) : range, set: (n) => stage.write(String(n)) };
    stated.cpuOffload = { value: flag('offload_optimizer'), stated: !!arg('offload_optimizer').node, range, set: (o) => arg('offload_optimizer').write(o ? 'true' : 'false') };
    stated.paramOffload = { value: flag('offload_parameters'), stated: !!arg('offload_parameters').node, range, set: (o) => arg('offload_parameters').write(o ? 'true' : 'false') };
    const overlap = arg('overlap_comm').node?.value;
    stated.serialSync = lightningDeepSpeedSerialSync(typeof overlap === 'boolean' ? overlap : undefined);
    stated.weightGather = DEEPSPEED_WEIGHT_GATHER;
    return true;
  }
  // Another strategy class (ModelParallelStrategy, a custom one): its sharding is not read.
  (stated.unmodelled ??= []).push({ range, short: 'strategy class not read', message: `strategy class_path ${String(cls.value)}: WAP reads FSDPStrategy and DeepSpeedStrategy here; this config's plan leaves the sharding to the search` });
  return true;
}

function launchOf(text: string, doc: Document.Parsed, path: string[]): LaunchSettings {
  const devices = trainerKey(text, doc, path, 'devices');
  const nodes = trainerKey(text, doc, path, 'num_nodes');
  const perNode = count(devices.node);
  const machines = count(nodes.node);
  const strategy = nestedScalar(doc, path, 'strategy');
  const cls = nestedScalar(doc, [...path, 'strategy'], 'class_path');
  const kind = strategy ? strategyKind(String(strategy.value)) : cls ? STRATEGY_CLASSES[String(cls.value).replace(/^.*\./, '')] : undefined;
  const named = strategy ?? cls;
  // `devices: [0, 1, 2, 3]` names GPU indices: as many processes per node (the Trainer's list form).
  const list = doc.getIn([...path, 'devices'], true);
  const ids = isSeq(list) && list.items.every((i) => isScalar(i) && Number.isInteger(i.value)) ? list.items.map((i) => (i as Scalar).value as number) : undefined;
  return {
    ...(perNode !== undefined ? { perNode: { value: perNode, range: valueRange(devices.node!), set: (k: number) => devices.write(String(k)) ?? [] } } : {}),
    ...(ids && isSeq(list) && list.range ? { deviceIds: { value: ids, range: { start: list.range[0], end: list.range[1] } } } : {}),
    ...(machines !== undefined ? { nodes: { value: machines, range: valueRange(nodes.node!), set: (k: number) => nodes.write(String(k)) ?? [] } } : {}),
    ...(kind && named ? { parallelism: { value: kind, range: valueRange(named) } } : {}),
  };
}

/** GPUs the Trainer starts: devices (a count or a list of indices) × num_nodes. */
function worldOf(launch: LaunchSettings): number | undefined {
  const perNode = launch.perNode?.value ?? launch.deviceIds?.value.length;
  return perNode && perNode * (launch.nodes?.value ?? 1);
}

function parsedTrainer(fileName: string, text: string): { doc: Document.Parsed; path: string[] } | undefined {
  const doc = parseYamlConfig(text);
  const path = trainerPath(doc, fileName);
  return path && { doc, path };
}

export const lightningYamlReader: ConfigReader = {
  format: 'lightning-yaml',
  detect(fileName, text) {
    if (!/\.ya?ml$/i.test(fileName)) return false;
    return (
      TRAINER_TARGET_LINE.test(text) ||
      (/^(fit:\s*\n\s+)?trainer:\s*$/m.test(text) && TRAINER_KEYS.test(text)) ||
      (TRAINER_GROUP_FILE.test(fileName) && !/^_target_:/m.test(text) && TOP_TRAINER_KEYS.test(text))
    );
  },
  check(fileName, text, plan, files) {
    const read = parsedTrainer(fileName, text);
    if (!read) return [];
    const { doc, path } = read;
    const accelerator = nestedScalar(doc, path, 'accelerator');
    if (accelerator && !['gpu', 'cuda', 'auto'].includes(String(accelerator.value))) return []; // CPU/TPU runs are not GPU plans
    const launch = launchOf(text, doc, path);
    const world = worldOf(launch);
    const stated = withLaunchedWorld(fileName, readSetup(text, doc, path, world), files, 'argument');
    const findings: ConfigFinding[] = [];
    if (!plan) return setupNotes('lightning-yaml', stated);
    findings.push(...compareSetup('lightning-yaml', text, stated, plan));
    findings.push(...compareLaunch('lightning-yaml', launch, plan, (t) => `devices: ${t.perNode ?? t.gpus}${t.nodes > 1 ? `, num_nodes: ${t.nodes}` : ''}`));
    return findings;
  },
  readSetup(fileName, text) {
    const read = parsedTrainer(fileName, text);
    if (!read) return undefined;
    return readSetup(text, read.doc, read.path, worldOf(launchOf(text, read.doc, read.path)));
  },
  launchedAs: 'argument',
};
