/**
 * The plan as runnable PyTorch (torch >= 2.4): a DeviceMesh with the plan's
 * data × tensor degrees, parallelize_module with ColwiseParallel /
 * RowwiseParallel (and SequenceParallel for norms) keyed by the model's own
 * module names, activation checkpointing of the repeated blocks, and
 * fully_shard (FSDP2) or replicate on the data-parallel axis. It replaces the
 * old single-process "placement" preview.
 */
import type { AmpStyle, LayerPlan, PlanReport, TrainingSetup } from '../protocol/plan';
import type { ExportedFile } from './exportPlan';

/** Linear/Embedding split by output (column) or by input (row); parallelize_module has styles for only these. */
function styleFor(l: LayerPlan): 'ColwiseParallel' | 'RowwiseParallel' | undefined {
  if (l.modelDegree <= 1 || !/^(Linear|Embedding|Dense|LazyLinear)$/.test(l.type)) return undefined;
  return l.splitDim === 'inputs' ? 'RowwiseParallel' : 'ColwiseParallel';
}

const isNorm = (l: LayerPlan): boolean => /Norm/i.test(l.type) && !/Batch/i.test(l.type);

/** The repeated blocks ("model.layers.0", "h.11"): what FSDP2 and checkpointing wrap one by one. */
/** How to train the 16-bit style the plan priced, without FSDP2's mixed-precision policy to do it. */
function precisionNote(style: AmpStyle | undefined, dtype: string): string {
  if (style === 'pure') return `# Precision: model.to(${dtype}); the optimizer keeps its state in ${dtype} too, as the plan assumes.`;
  if (style === 'autocast') return `# Precision: run forward/backward under torch.autocast("cuda", dtype=${dtype}), as the plan assumes.`;
  return `# Precision: the plan assumes ${dtype} weights and gradients with an fp32 master copy; under torch.autocast("cuda", dtype=${dtype}) instead, plan with --amp-style autocast (fp32 gradients double the all-reduce).`;
}

export function repeatedBlocks(layers: LayerPlan[]): string[] {
  const blocks: string[] = [];
  for (const l of layers) {
    const m = /^(.*?\.\d+)\./.exec(l.name);
    if (m && !blocks.includes(m[1]!)) blocks.push(m[1]!);
  }
  return blocks.length >= 2 ? blocks : [];
}

const py = (s: string): string => JSON.stringify(s);

function degreesOf(report: PlanReport): { dp: number; tp: number; setup?: TrainingSetup } {
  const setup = report.plan.setup;
  const tp = setup?.tensorParallel ?? Math.max(1, ...report.plan.layers.map((l) => l.modelDegree));
  const pp = setup?.pipelineStages ?? report.plan.pipeline?.stages ?? 1;
  const dp = setup?.dataParallel ?? Math.max(1, Math.floor(report.plan.gpus / (tp * pp)));
  return { dp, tp, setup };
}

export function torchParallelizeSnippet(report: PlanReport): ExportedFile {
  const { dp, tp, setup } = degreesOf(report);
  const layers = report.plan.layers;
  const styled = layers.map((l) => [l, styleFor(l)] as const).filter((x): x is readonly [LayerPlan, 'ColwiseParallel' | 'RowwiseParallel'] => !!x[1]);
  const sp = tp > 1 && (setup?.sequenceParallel ?? false);
  const norms = sp ? layers.filter(isNorm) : [];
  const unsupported = layers.filter((l) => l.modelDegree > 1 && !styleFor(l) && l.params > 0);
  const blocks = repeatedBlocks(layers);
  const zero = setup?.zeroStage ?? 0;
  const recompute = setup?.recompute ?? 'none';
  const bf16 = setup?.precision === 'bf16' ? 'torch.bfloat16' : setup?.precision === 'fp16' ? 'torch.float16' : undefined;
  const pp = setup?.pipelineStages ?? report.plan.pipeline?.stages ?? 1;

  const imports = [
    'import torch',
    'from torch import nn',
    'from torch.distributed.device_mesh import init_device_mesh',
    ...(styled.length || norms.length ? [`from torch.distributed.tensor.parallel import ${[...new Set([...styled.map((s) => s[1]), ...(norms.length ? ['SequenceParallel'] : [])])].sort().join(', ')}, parallelize_module`] : []),
    ...(zero >= 2 ? ['from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard'] : dp > 1 ? ['from torch.distributed._composable.replicate import replicate'] : []),
    ...(recompute !== 'none' && blocks.length ? ['from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper'] : []),
  ];
  const body: string[] = [];
  body.push(`def parallelize(model: nn.Module) -> nn.Module:`);
  body.push(`    """Applies WAP's plan: ${dp} data-parallel × ${tp} tensor-parallel GPU(s); call after model creation, on every rank."""`);
  body.push(`    mesh = init_device_mesh("cuda", (${dp}, ${tp}), mesh_dim_names=("dp", "tp"))`);
  if (styled.length || norms.length) {
    body.push('    # Tensor parallelism, by the module names WAP read from the model source.');
    body.push('    tp_plan = {');
    for (const n of norms) body.push(`        ${py(n.name)}: SequenceParallel(),`);
    for (const [l, style] of styled) body.push(`        ${py(l.name)}: ${style}(),  # ${l.type}, split ${l.splitDim ?? 'outputs'} ×${l.modelDegree}`);
    body.push('    }');
    body.push('    parallelize_module(model, mesh["tp"], tp_plan)');
    if (styled.some(([l]) => l.splitDim === 'heads')) body.push(`    # Split attention projections leave each rank n_heads // ${tp} heads: the attention code must use the local count (as torchtitan's does).`);
  }
  for (const l of unsupported) body.push(`    # ${l.name} (${l.type}) is split ×${l.modelDegree} in the plan; parallelize_module has no style for ${l.type}: shard it by hand.`);
  if (recompute !== 'none' && blocks.length) {
    body.push(`    # Activation recompute (${recompute} in the plan): each repeated block re-runs its forward in backward.`);
    body.push(`    for name in [${blocks.map(py).join(', ')}]:`);
    body.push('        parent, _, child = name.rpartition(".")');
    body.push('        owner = model.get_submodule(parent) if parent else model');
    body.push('        owner.register_module(child, checkpoint_wrapper(model.get_submodule(name)))');
  }
  if (zero >= 2) {
    body.push(`    # FSDP2 over the data-parallel axis: ZeRO-${zero}${zero === 2 ? ' (weights stay gathered between forward and backward)' : ''}.`);
    body.push(`    mp = MixedPrecisionPolicy(param_dtype=${bf16 ?? 'torch.float32'}, reduce_dtype=torch.float32)`);
    if (blocks.length) {
      body.push(`    for name in [${blocks.map(py).join(', ')}]:`);
      body.push(`        fully_shard(model.get_submodule(name), mesh=mesh["dp"], mp_policy=mp, reshard_after_forward=${zero === 3 ? 'True' : 'False'})`);
    }
    body.push(`    fully_shard(model, mesh=mesh["dp"], mp_policy=mp, reshard_after_forward=${zero === 3 ? 'True' : 'False'})`);
  } else if (dp > 1) {
    body.push(`    # Plain data parallelism${zero === 1 ? ' (ZeRO-1: wrap the optimizer in torch.distributed.optim.ZeroRedundancyOptimizer)' : ''}.`);
    body.push('    replicate(model, device_mesh=mesh["dp"])');
  }
  body.push('    return model');

  const notes = [
    `# Generated by WAP for ${report.model} on '${report.cluster.name}': ${report.plan.gpus} GPU(s), global batch ${report.batch}.`,
    '# Requires torch >= 2.4 (DTensor tensor parallel, FSDP2). Launch with torchrun, one process per GPU.',
    ...(setup ? [`# Setup: ${setup.precision}, ZeRO-${setup.zeroStage}, recompute ${setup.recompute}, micro-batch ${setup.microBatch} × accumulation ${setup.gradientAccumulation}.`] : []),
    ...(bf16 && zero < 2 ? [precisionNote(setup!.ampStyle, bf16)] : []),
    ...(pp > 1 ? [`# The plan pipelines the model in ${pp} stages: split it with torch.distributed.pipelining (not generated here).`] : []),
  ];
  const content = [...notes, '', ...imports, '', '', ...body, ''].join('\n');
  return {
    fileName: 'parallelize.py',
    content,
    description: `PyTorch parallelize() for ${report.model}: mesh ${dp}×${tp}, ${styled.length} tensor-parallel module(s)${zero >= 2 ? `, FSDP2 ZeRO-${zero}` : ''}${recompute !== 'none' && blocks.length ? `, checkpointing ${blocks.length} blocks` : ''}.`,
  };
}
