/**
 * A DeepSpeed config written where the JSON file's path would go: the Trainer's `deepspeed={...}` and Lightning's
 * `DeepSpeedStrategy(config={...})` in Python, a recipe's `deepspeed:` mapping in YAML or JSON. Its ZeRO stage
 * (rewritten in place) and offloads are read as DeepSpeed reads its JSON, whatever syntax holds them (each gives a
 * `TreeValue` view of its tree, configTree.ts); precision and batch keys are left to the caller's own arguments,
 * which fill DeepSpeed's "auto".
 */
import type { Node } from 'web-tree-sitter';
import type { ZeroStage } from '../protocol/plan';
import type { TreeValue } from './configTree';
import { deepspeedParamOffloadRules, offloadsTo } from './deepspeedSetup';
import { callArgs, findCalls, intLiteral, nodeRange, pythonReady, stringLiteral, withPythonTree } from './python';
import { nvmeUnmodelled, type SetupDim, type StatedSetup } from './setup';
import { DEEPSPEED_WEIGHT_GATHER, deepspeedSerialSync } from './frameworkTimings';
import { baseOf } from './filePaths';
import { configMentioned } from './modelFor';

/**
 * `{"zero_optimization": {"stage": 2, "offload_optimizer": {...}}, ...}`; `keyword` names it in messages ('deepspeed=').
 * Whether the ZeRO stage could be read (a zero_optimization mapping whose stage is a number, or absent: 0).
 */
export function readInlineDeepSpeedConfig(config: TreeValue, stated: StatedSetup, keyword: string): boolean {
  const zero = config.get('zero_optimization');
  if (zero?.kind !== 'map') return false;
  const stage = zero.get('stage');
  const value = !stage ? 0 : stage.kind === 'int' ? (stage.value as number) : undefined;
  const read = value !== undefined && value >= 0 && value <= 3;
  if (read) {
    const range = (stage ?? zero).range;
    // Every syntax writes a whole number the same way: the digit replaces the digit.
    stated.zeroStage = { value: value as ZeroStage, stated: !!stage, range, set: stage ? (z, plan) => (plan?.hybridShard ? undefined : [{ ...range, newText: String(z) }]) : undefined };
  }
  for (const [section, key] of [['offload_optimizer', 'cpuOffload'], ['offload_param', 'paramOffload']] as const) {
    const offload = inlineOffload(zero, section);
    if (!offload) continue;
    const { nvme, ...dim } = offload;
    stated[key] = dim;
    if (nvme) (stated.unmodelled ??= []).push(nvmeUnmodelled(dim.range, `${keyword}{… "${section}": {"device": "nvme"} …}`));
  }
  deepspeedParamOffloadRules(stated, `${keyword}{… "offload_param" …} without "offload_optimizer"`);
  const overlap = zero.get('overlap_comm');
  stated.serialSync = deepspeedSerialSync(overlap?.kind === 'bool' ? (overlap.value as boolean) : undefined);
  stated.weightGather = DEEPSPEED_WEIGHT_GATHER;
  return read;
}

/**
 * One offload section, read as DeepSpeed reads its JSON: `{"device": "cpu"|"nvme"}` offloads; "none", no device
 * (DeepSpeed's default is "none"), None or no section does not. A device WAP cannot read states nothing. No `set`:
 * the config is the user's.
 */
function inlineOffload(zero: TreeValue, section: string): (SetupDim<boolean> & { nvme: boolean }) | undefined {
  const node = zero.get(section);
  const range = (node ?? zero).range;
  if (!node || node.kind === 'none') return { value: false, stated: !!node, range, nvme: false };
  const deviceNode = node.kind === 'map' ? node.get('device') : undefined;
  if (deviceNode && deviceNode.kind !== 'string') return undefined;
  const device = deviceNode?.value;
  return { value: offloadsTo(device), stated: true, range: (deviceNode ?? node).range, nvme: device === 'nvme' };
}

/** A key's value in a Python dict literal (string keys), else undefined. */
function dictValue(dict: Node, key: string): Node | undefined {
  for (const pair of dict.namedChildren) {
    if (pair?.type !== 'pair') continue;
    const k = pair.childForFieldName('key');
    if (k && stringLiteral(k) === key) return pair.childForFieldName('value') ?? undefined;
  }
  return undefined;
}

/** A Python literal as a TreeValue: dicts, strings, whole numbers and None are read; anything else is the run's. */
function pythonValue(n: Node): TreeValue {
  const text = stringLiteral(n);
  const int = intLiteral(n);
  const kind = n.type === 'dictionary' ? 'map' : n.type === 'none' ? 'none' : text !== undefined ? 'string' : int !== undefined ? 'int' : 'other';
  return {
    kind, value: text ?? int, range: nodeRange(n),
    get: (key) => {
      const v = kind === 'map' ? dictValue(n, key) : undefined;
      return v && pythonValue(v);
    },
  };
}

/** `deepspeed={...}` / `DeepSpeedStrategy(config={...})` written as a Python dict. */
export function readInlineDeepSpeed(dict: Node, stated: StatedSetup, keyword: string): void {
  readInlineDeepSpeedConfig(pythonValue(dict), stated, keyword);
}

/**
 * Whether the script hands DeepSpeed a config of its own making: `deepspeed.initialize(config=ds_config)` with a
 * dict or a variable (DeepSpeedExamples' cifar builds it in get_ds_config(args) from --dtype and --stage), not a
 * JSON file's name. A DeepSpeed JSON beside such a script that no file names is not its run's config.
 */
export function passesOwnDeepSpeedConfig(text: string): boolean {
  if (!pythonReady() || !/deepspeed/.test(text) || !/\binitialize\s*\(/.test(text)) return false;
  return withPythonTree(text, (root) =>
    findCalls(root, 'initialize').some((call) => {
      if (!/(^|\.)deepspeed\.initialize$/.test(call.childForFieldName('function')?.text ?? '')) return false;
      // `config_params` is the keyword's name before DeepSpeed 0.3.
      const config = callArgs(call)?.keywords.get('config') ?? callArgs(call)?.keywords.get('config_params');
      return !!config && config.type !== 'none' && stringLiteral(config) === undefined;
    }),
  );
}

/**
 * Which DeepSpeed JSONs beside the model the hints skip: where the model's script passes DeepSpeed its own config
 * (passesOwnDeepSpeedConfig), a JSON no other file names is not its run's config.
 */
export function staleDeepSpeedJson(files: ReadonlyArray<{ name: string; text: string }>, modelFile: string | undefined): (name: string) => boolean {
  const modelText = files.find((f) => f.name === modelFile)?.text;
  if (modelText === undefined || !passesOwnDeepSpeedConfig(modelText)) return () => false;
  return (name) => !files.some((o) => o.name !== name && configMentioned(o.text, baseOf(name)));
}

