/**
 * How a plain PyTorch script shards its model, read with torch's semantics:
 * - FSDP1 `FullyShardedDataParallel(model, sharding_strategy=ShardingStrategy.X, cpu_offload=CPUOffload(…))`:
 *   FULL_SHARD (torch's default) ZeRO-3, SHARD_GRAD_OP ZeRO-2, NO_SHARD ZeRO-0, HYBRID_SHARD and
 *   _HYBRID_SHARD_ZERO2 the same stages within a node, replicated across nodes;
 * - FSDP2 `fully_shard(module, mesh=…, reshard_after_forward=…, offload_policy=…)`: the blocks' reshard after
 *   forward (True, the default for all but the root: ZeRO-3; False keeps the gathered parameters until backward:
 *   ZeRO-2), a 2-D mesh is HSDP (torch replicates over its first dimension, shards over its second);
 * - `DistributedDataParallel` replicates everything (ZeRO-0), and with `ZeroRedundancyOptimizer` shards the
 *   optimizer state (ZeRO-1).
 * FSDP's offload (CPUOffload(offload_params=True), CPUOffloadPolicy()) moves parameters, gradients and the optimizer
 * step to the CPU together (offloadDims.ts). Several wrappers (DDP or FSDP behind a flag), values that are
 * expressions, or settings passed positionally are the run's choice: nothing is stated about them.
 */
import type { Node } from 'web-tree-sitter';
import type { TrainingSetup, ZeroStage } from '../protocol/plan';
import { editsOnce, type CallKeywords } from './callKeywords';
import { FSDP_SHARDING, fsdpOffloadOn, fsdpShardingFor } from './fsdpStrategy';
import { stateJointOffload } from './offloadDims';
import { guardOf, nodeRange, replaceRange, stringLiteral } from './python';
import type { StatedSetup } from './setup';
import type { ScriptContext } from './torchScriptSetup';
import type { TextEdit, TextRange } from './types';
import { FSDP_WEIGHT_GATHER } from './frameworkTimings';

export type Wrapper = 'fsdp' | 'fsdp2' | 'ddp';

/** torch's names for the calls that wrap a model, by the setup they give. */
export const WRAPPERS: Readonly<Record<string, Wrapper>> = { FullyShardedDataParallel: 'fsdp', fully_shard: 'fsdp2', DistributedDataParallel: 'ddp' };

export const WRAPPER_LABEL: Readonly<Record<Wrapper, string>> = { fsdp: 'PyTorch FSDP script', fsdp2: 'PyTorch FSDP2 script', ddp: 'PyTorch DDP script' };

const FSDP_STAGES = 'FSDP\'s ShardingStrategy has FULL_SHARD (ZeRO-3), SHARD_GRAD_OP (ZeRO-2), NO_SHARD (ZeRO-0) and their hybrid forms, no optimizer-only sharding: for ZeRO-1 wrap the model in DistributedDataParallel and its optimizer in ZeroRedundancyOptimizer';
const FULLY_SHARD_STAGES = 'fully_shard shards the parameters (ZeRO-3) or, with reshard_after_forward=False on the blocks, keeps them gathered until backward (ZeRO-2): for ZeRO-0 wrap the model in DistributedDataParallel, for ZeRO-1 its optimizer in ZeroRedundancyOptimizer too';
const FULLY_SHARD_HYBRID = 'fully_shard\'s hybrid sharding is its mesh\'s: a 2-D mesh (init_device_mesh("cuda", (nodes, gpus_per_node), mesh_dim_names=("replicate", "shard"))) replicates across nodes and shards within one, a 1-D mesh shards over every GPU';
const DDP_STAGES = 'DistributedDataParallel replicates the model (ZeRO-0; with ZeroRedundancyOptimizer around the optimizer, ZeRO-1): for ZeRO-2/3 wrap it in FSDP instead (fully_shard, reshard_after_forward=False for ZeRO-2), or export the plan with `wap export --format torch-parallelize`';
const DDP_OFFLOAD = 'DistributedDataParallel keeps parameters, gradients and optimizer state on the GPU: FSDP\'s CPUOffload(offload_params=True) or fully_shard\'s offload_policy=CPUOffloadPolicy() moves them to the CPU';

/** One value every call agrees on, else undefined (a call that says nothing WAP can read makes it unknown). */
function agreed<T>(values: Array<T | undefined>, key: (v: T) => string = String): T | undefined {
  const first = values[0];
  return first !== undefined && values.every((v) => v !== undefined && key(v) === key(first)) ? first : undefined;
}

/** Whether a call runs once per block: inside a loop or comprehension (`for block in model.layers: fully_shard(block)`). */
function perBlock(call: Node): boolean {
  for (let n = call.parent; n; n = n.parent) if (/^(for_statement|for_in_clause|while_statement)$/.test(n.type)) return true;
  return false;
}

/** How a call writes `cpu_offload` / `offload_params`: the CPUOffload call's flag, else a new CPUOffload. */
function fsdpOffloadWriter(ctx: ScriptContext, site: CallKeywords, module: string): (on: boolean) => TextEdit[] | undefined {
  const value = site.get('cpu_offload');
  const cls = ctx.names.spell('CPUOffload', module);
  if (value?.type === 'call') {
    const inner = ctx.keywords(value);
    const flag = inner?.positional[0];
    const at = flag ? nodeRange(flag) : undefined;
    return (on) => (at ? replaceRange(at, on ? 'True' : 'False') : inner?.write('offload_params', on ? 'True' : 'False'));
  }
  return (on) => (on ? (cls ? site.write('cpu_offload', `${cls}(offload_params=True)`) : undefined) : []);
}

/** FSDP1: the sharding strategy and CPU offload every `FullyShardedDataParallel(…)` call gives. */
function readFsdp(ctx: ScriptContext, calls: Node[], stated: StatedSetup): void {
  const sites = calls.map((c) => ctx.keywords(c));
  // FSDP(module, process_group, sharding_strategy, cpu_offload, …): settings passed by position are not read.
  if (sites.some((s) => !s || s.positional.length > 1)) return;
  const module = ctx.names.moduleOf('FullyShardedDataParallel') ?? 'torch.distributed.fsdp';
  const shardings = (sites as CallKeywords[]).map((site) => {
    const v = site.get('sharding_strategy');
    if (!v) return site.hidden ? undefined : { member: 'FULL_SHARD', stated: false, prefix: ctx.names.spell('ShardingStrategy', module) };
    if (v.type === 'none') return { member: 'FULL_SHARD', stated: true, range: nodeRange(v), prefix: ctx.names.spell('ShardingStrategy', module) };
    const member = v.type === 'attribute' ? v.childForFieldName('attribute')?.text : undefined;
    const owner = v.childForFieldName('object')?.text;
    return member && owner && /(^|\.)ShardingStrategy$/.test(owner) && FSDP_SHARDING[member] ? { member, stated: true, range: nodeRange(v), prefix: owner } : undefined;
  });
  const sharding = agreed(shardings, (s) => s.member);
  if (sharding) {
    const { zero, hybrid } = FSDP_SHARDING[sharding.member]!;
    const write = (z: ZeroStage, h: boolean): TextEdit[] | undefined => {
      const member = fsdpShardingFor(z, h);
      return member ? editsOnce((sites as CallKeywords[]).map((s, i) => (shardings[i]!.prefix ? s.write('sharding_strategy', `${shardings[i]!.prefix}.${member}`) : undefined))) : undefined;
    };
    const says = (plan: TrainingSetup): boolean => fsdpShardingFor(plan.zeroStage, plan.hybridShard) !== undefined;
    const range = shardings.find((s) => s?.range)?.range ?? stated.anchor;
    const isStated = shardings.some((s) => s?.stated);
    // One keyword says both: each writes the plan's value of the other, so the two edits agree (and are kept once).
    stated.zeroStage = { value: zero, stated: isStated, range, expressible: says, set: (z, plan) => write(z, plan?.hybridShard ?? hybrid) };
    stated.hybridShard = { value: hybrid, stated: isStated, range, expressible: says, set: (h, plan) => write(plan?.zeroStage ?? zero, h) };
    stated.weightGather = FSDP_WEIGHT_GATHER;
    stated.inexpressible.zeroStage = FSDP_STAGES;
    stated.inexpressible.hybridShard = FSDP_STAGES;
  }
  const offloads = (sites as CallKeywords[]).map((site) => {
    const v = site.get('cpu_offload');
    if (!v) return site.hidden ? undefined : { on: false, stated: false };
    const on = fsdpOffloadOn(v);
    return on === undefined ? undefined : { on, stated: true, range: nodeRange(v) };
  });
  const offload = agreed(offloads, (o) => String(o.on));
  if (offload) {
    const writers = (sites as CallKeywords[]).map((s) => fsdpOffloadWriter(ctx, s, module));
    stateJointOffload(stated, offload.on, offloads.some((o) => o?.stated), offloads.find((o) => o?.range)?.range ?? stated.anchor, (on) => editsOnce(writers.map((w) => w(on))));
  }
}

type Reshard = 'true' | 'false' | 'default' | 'count';

/** Whether a mesh given to fully_shard is 2-D (HSDP): init_device_mesh's shape, or a mesh indexed by two dimension names. */
function meshIsHybrid(ctx: ScriptContext, mesh: Node): boolean | undefined {
  // A second dimension that is another parallelism is not a replica group: unsure, so nothing is said.
  const otherParallelism = (names: string[]): boolean => names.some((n) => n.split(/[^a-z0-9]+/i).some((w) => /^(tp|tensor|pp|pipe|pipeline|cp|context|ep|expert|sp)$/i.test(w)));
  if (mesh.type === 'subscript') {
    const keys = mesh.childrenForFieldName('subscript');
    const items = keys.length === 1 && keys[0]!.type === 'tuple' ? keys[0]!.namedChildren.filter((c): c is Node => !!c) : keys;
    const names = items.map((k) => stringLiteral(k));
    if (names.some((n) => n === undefined) || otherParallelism(names as string[])) return undefined;
    return names.length === 1 ? false : names.length === 2 ? true : undefined;
  }
  if (mesh.type !== 'call' || ctx.names.of(mesh) !== 'init_device_mesh') return undefined;
  const site = ctx.keywords(mesh);
  const shape = site && (site.get('mesh_shape') ?? site.positional[1]);
  const dims = shape && (shape.type === 'tuple' || shape.type === 'list') ? shape.namedChildren.filter((c): c is Node => !!c && c.type !== 'comment') : undefined;
  if (!dims) return undefined;
  if (dims.length === 1) return false;
  const dimNames = site!.get('mesh_dim_names');
  const names = dimNames ? dimNames.namedChildren.filter((c): c is Node => !!c).map((c) => stringLiteral(c) ?? '') : [];
  if (dims.length !== 2 || otherParallelism(names)) return undefined;
  // A replica dimension of one is plain FSDP over the other.
  return dims[0]!.text !== '1';
}

/** FSDP2: the stage the blocks' reshard_after_forward gives, the mesh's hybrid sharding, the offload policy. */
function readFullyShard(ctx: ScriptContext, calls: Node[], stated: StatedSetup): void {
  const sites = calls.map((c) => ctx.keywords(c));
  if (sites.some((s) => !s)) return;
  const all = sites as CallKeywords[];
  // Whatever stage its arguments give, FSDP2 gathers the way FSDP does.
  stated.weightGather = FSDP_WEIGHT_GATHER;
  const module = ctx.names.moduleOf('fully_shard') ?? 'torch.distributed.fsdp';
  // torch reshards every module but the root after forward by default: the blocks' setting is the stage.
  const blocks = calls.map(perBlock);
  const considered = all.filter((_, i) => blocks[i] || !blocks.includes(true));
  const reshards = considered.map((site): { kind: Reshard; range?: TextRange } | undefined => {
    const v = site.get('reshard_after_forward');
    if (!v) return site.hidden ? undefined : { kind: 'default' };
    if (v.type === 'true' || v.type === 'false') return { kind: v.type, range: nodeRange(v) };
    return v.type === 'integer' ? { kind: 'count', range: nodeRange(v) } : undefined;
  });
  const count = reshards.find((r) => r?.kind === 'count');
  if (count) {
    (stated.unmodelled ??= []).push({ range: count.range!, short: 'resharding to a smaller group not modelled', message: 'reshard_after_forward=<int> keeps the parameters gathered over a smaller group between forward and backward: WAP plans FSDP2 as ZeRO-2 or ZeRO-3, so this config\'s stage is left to the search' });
  }
  // A root-only fully_shard(model) without the keyword reshards by torch's version (2.4-2.6: yes; later: not the root): unsure.
  const sharded = reshards.every((r) => r?.kind === 'true' || (r?.kind === 'default' && blocks.includes(true)));
  const zero: ZeroStage | undefined = reshards.every((r) => r?.kind === 'false') ? 2 : sharded ? 3 : undefined;
  if (zero !== undefined) {
    stated.zeroStage = {
      value: zero, stated: reshards.some((r) => r?.range), range: reshards.find((r) => r?.range)?.range ?? stated.anchor,
      expressible: (plan) => plan.zeroStage >= 2,
      set: (z) => editsOnce(considered.map((s, i) => (z === 3 && reshards[i]!.kind !== 'false' ? [] : s.write('reshard_after_forward', z === 2 ? 'False' : 'True')))),
    };
    stated.inexpressible.zeroStage = FULLY_SHARD_STAGES;
  }
  const meshes = all.map((site) => {
    const mesh = site.get('mesh');
    return mesh ? meshIsHybrid(ctx, mesh) : site.hidden ? undefined : false;
  });
  const hybrid = agreed(meshes);
  if (hybrid !== undefined) {
    const mesh = all.map((s) => s.get('mesh')).find((m) => m);
    stated.hybridShard = { value: hybrid, stated: !!mesh, range: mesh ? nodeRange(mesh) : stated.anchor, expressible: (plan) => plan.hybridShard === hybrid };
    stated.inexpressible.hybridShard = FULLY_SHARD_HYBRID;
  }
  const policies = all.map((site) => {
    const v = site.get('offload_policy');
    if (!v) return site.hidden ? undefined : { on: false };
    const cls = v.type === 'call' ? ctx.names.of(v) : undefined;
    return cls === 'CPUOffloadPolicy' ? { on: true, range: nodeRange(v) } : cls === 'OffloadPolicy' ? { on: false, range: nodeRange(v) } : undefined;
  });
  const policy = agreed(policies, (p) => String(p.on));
  if (policy) {
    const on = ctx.names.spell('CPUOffloadPolicy', module);
    const off = ctx.names.spell('OffloadPolicy', module);
    const write = (next: boolean): TextEdit[] | undefined => editsOnce(all.map((s, i) => {
      if (policies[i]!.on === next) return [];
      const cls = next ? on : off;
      return cls ? s.write('offload_policy', `${cls}()`) : undefined;
    }));
    stateJointOffload(stated, policy.on, policies.some((p) => p?.range), policies.find((p) => p?.range)?.range ?? stated.anchor, write);
  }
}

/** DDP: ZeRO-0, or ZeRO-1 with ZeroRedundancyOptimizer (one behind a flag is the run's choice); never offloaded. */
function readDdp(ctx: ScriptContext, stated: StatedSetup): void {
  const sharders = ctx.calls.get('ZeroRedundancyOptimizer') ?? [];
  if (!sharders.some((c) => guardOf(c))) {
    const value: ZeroStage = sharders.length > 0 ? 1 : 0;
    stated.zeroStage = { value, stated: true, range: sharders[0] ? nodeRange(sharders[0]) : stated.anchor, expressible: (plan) => plan.zeroStage === value };
    stated.inexpressible.zeroStage = DDP_STAGES;
  }
  const off = { value: false, stated: false, range: stated.anchor, expressible: (plan: TrainingSetup) => !plan.cpuOffload && !plan.paramOffload };
  stated.cpuOffload = { ...off };
  stated.paramOffload = { ...off };
  stated.inexpressible.cpuOffload = DDP_OFFLOAD;
  stated.inexpressible.paramOffload = DDP_OFFLOAD;
}

/** The wrapper a script uses, when exactly one kind wraps the model (DDP's optimizer sharding alone counts as DDP). */
export function wrapperOf(ctx: ScriptContext): Wrapper | undefined {
  const kinds = new Set(Object.entries(WRAPPERS).filter(([name]) => ctx.calls.get(name)?.length).map(([, w]) => w));
  if (kinds.size === 0 && ctx.calls.get('ZeroRedundancyOptimizer')?.length) return 'ddp';
  return kinds.size === 1 ? [...kinds][0] : undefined;
}

/** Reads the sharding dimensions of the script's one wrapper into `stated`; none when it has several. */
export function readSharding(ctx: ScriptContext, wrapper: Wrapper | undefined, stated: StatedSetup): void {
  if (wrapper === 'fsdp') readFsdp(ctx, ctx.calls.get('FullyShardedDataParallel') ?? [], stated);
  else if (wrapper === 'fsdp2') readFullyShard(ctx, ctx.calls.get('fully_shard') ?? [], stated);
  else if (wrapper === 'ddp') readDdp(ctx, stated);
}
