/**
 * A DeepSpeed config written as a Python dict where the JSON file would go:
 * the Trainer's `deepspeed={...}` and Lightning's `DeepSpeedStrategy(config={...})`.
 * Its ZeRO stage (rewritten in place) and offloads are read as DeepSpeed
 * reads its JSON; precision and batch keys are left to the caller's own
 * arguments, which fill DeepSpeed's "auto".
 */
import type { Node } from 'web-tree-sitter';
import type { ZeroStage } from '../protocol/plan';
import { deepspeedParamOffloadRules, offloadsTo } from './deepspeedSetup';
import { intLiteral, nodeRange, replaceRange, stringLiteral } from './python';
import { nvmeUnmodelled, type SetupDim, type StatedSetup } from './setup';

/** A key's value in a Python dict literal (string keys), else undefined. */
function dictValue(dict: Node, key: string): Node | undefined {
  for (const pair of dict.namedChildren) {
    if (pair?.type !== 'pair') continue;
    const k = pair.childForFieldName('key');
    if (k && stringLiteral(k) === key) return pair.childForFieldName('value') ?? undefined;
  }
  return undefined;
}

/** `{"zero_optimization": {"stage": 2, "offload_optimizer": {...}}, ...}`; `keyword` names it in messages ('deepspeed='). */
export function readInlineDeepSpeed(dict: Node, stated: StatedSetup, keyword: string): void {
  const zero = dictValue(dict, 'zero_optimization');
  if (zero?.type !== 'dictionary') return;
  const stage = dictValue(zero, 'stage');
  const value = stage ? intLiteral(stage) : 0;
  if (value !== undefined && value <= 3) {
    const range = stage ? nodeRange(stage) : nodeRange(zero);
    stated.zeroStage = { value: value as ZeroStage, stated: !!stage, range, set: stage ? (z, plan) => (plan?.hybridShard ? undefined : replaceRange(range, String(z))) : undefined };
  }
  for (const [section, key] of [['offload_optimizer', 'cpuOffload'], ['offload_param', 'paramOffload']] as const) {
    const read = inlineOffload(zero, section);
    if (!read) continue;
    const { nvme, ...dim } = read;
    stated[key] = dim;
    if (nvme) (stated.unmodelled ??= []).push(nvmeUnmodelled(dim.range, `${keyword}{… "${section}": {"device": "nvme"} …}`));
  }
  deepspeedParamOffloadRules(stated, `${keyword}{… "offload_param" …} without "offload_optimizer"`);
}

/**
 * One offload section, read as DeepSpeed reads its JSON: `{"device": "cpu"|"nvme"}` offloads; "none", no device
 * (DeepSpeed's default is "none"), None or no section does not. A device WAP cannot read states nothing. No `set`:
 * the dict is the user's.
 */
function inlineOffload(zero: Node, section: string): (SetupDim<boolean> & { nvme: boolean }) | undefined {
  const node = dictValue(zero, section);
  const range = nodeRange(node ?? zero);
  if (!node || node.type === 'none') return { value: false, stated: !!node, range, nvme: false };
  const deviceNode = node.type === 'dictionary' ? dictValue(node, 'device') : undefined;
  const device = deviceNode ? stringLiteral(deviceNode) : undefined;
  if (deviceNode && device === undefined) return undefined;
  return { value: offloadsTo(device), stated: true, range: nodeRange(deviceNode ?? node), nvme: device === 'nvme' };
}
