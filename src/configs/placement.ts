/**
 * A PyTorch device-placement preview for plans with model-parallel layers or
 * pipeline stages. It is meant to be read and adapted, never applied blindly:
 * WAP only knows layer names as it read them from the source, not the user's
 * module paths, and a single-process placement is a different program from DDP.
 */
import type { LayerPlan, PlanReport } from '../protocol/plan';
import type { ExportedFile } from './exportPlan';

const CLASS_SOURCE: Record<string, string> = {
  ColumnParallelLinear: `class ColumnParallelLinear(nn.Module):
    """A Linear whose output features are split over devices; outputs are gathered on the first."""

    def __init__(self, linear: nn.Linear, devices):
        super().__init__()
        self.devices = [torch.device(d) for d in devices]
        rows = torch.tensor_split(torch.arange(linear.out_features), len(self.devices))
        self.parts = nn.ModuleList()
        for idx, dev in zip(rows, self.devices):
            part = nn.Linear(linear.in_features, len(idx), bias=linear.bias is not None)
            with torch.no_grad():
                part.weight.copy_(linear.weight[idx])
                if linear.bias is not None:
                    part.bias.copy_(linear.bias[idx])
            self.parts.append(part.to(dev))

    def forward(self, x):
        # Every device gets the whole input and computes its slice of the outputs.
        outs = [part(x.to(dev)) for part, dev in zip(self.parts, self.devices)]
        return torch.cat([o.to(self.devices[0]) for o in outs], dim=-1)
`,
  RowParallelLinear: `class RowParallelLinear(nn.Module):
    """A Linear whose input features are split over devices; partial sums are added on the first."""

    def __init__(self, linear: nn.Linear, devices):
        super().__init__()
        self.devices = [torch.device(d) for d in devices]
        self.cols = torch.tensor_split(torch.arange(linear.in_features), len(self.devices))
        self.parts = nn.ModuleList()
        for idx, dev in zip(self.cols, self.devices):
            part = nn.Linear(len(idx), linear.out_features, bias=False)
            with torch.no_grad():
                part.weight.copy_(linear.weight[:, idx])
            self.parts.append(part.to(dev))
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().to(self.devices[0]))

    def forward(self, x):
        outs = [part(x[..., idx.to(x.device)].to(dev)) for part, idx, dev in zip(self.parts, self.cols, self.devices)]
        y = sum(o.to(self.devices[0]) for o in outs)
        return y if self.bias is None else y + self.bias
`,
  ChannelParallelConv: `class ChannelParallelConv(nn.Module):
    """A Conv2d whose output channels are split over devices; channels are gathered on the first."""

    def __init__(self, conv: nn.Conv2d, devices):
        super().__init__()
        self.devices = [torch.device(d) for d in devices]
        chans = torch.tensor_split(torch.arange(conv.out_channels), len(self.devices))
        self.parts = nn.ModuleList()
        for idx, dev in zip(chans, self.devices):
            part = nn.Conv2d(conv.in_channels, len(idx), conv.kernel_size, conv.stride, conv.padding,
                             conv.dilation, groups=1, bias=conv.bias is not None)
            with torch.no_grad():
                part.weight.copy_(conv.weight[idx])
                if conv.bias is not None:
                    part.bias.copy_(conv.bias[idx])
            self.parts.append(part.to(dev))

    def forward(self, x):
        outs = [part(x.to(dev)) for part, dev in zip(self.parts, self.devices)]
        return torch.cat([o.to(self.devices[0]) for o in outs], dim=1)
`,
};

const py = (s: string): string => JSON.stringify(s);
const cuda = (devices: number[]): string => `[${devices.map((d) => py(`cuda:${d}`)).join(', ')}]`;

/** The wrapper that splits this layer, or undefined when no simple sketch exists (attention heads, embeddings…). */
function wrapperFor(l: LayerPlan): string | undefined {
  const t = l.type.toLowerCase();
  const dim = l.splitDim ?? (t.includes('conv') ? 'channels' : 'outputs');
  if (t.includes('linear') || t === 'dense') return dim === 'inputs' ? 'RowParallelLinear' : dim === 'outputs' ? 'ColumnParallelLinear' : undefined;
  if (t.includes('conv') && dim === 'channels') return 'ChannelParallelConv';
  return undefined;
}

/** Modules can be moved with .to(); functional ops (torch.relu, F.gelu, x.view) have nothing to move. */
const isModule = (l: LayerPlan): boolean => /^[A-Z]/.test(l.type) && !l.type.includes('.');

export function placementSnippet(report: PlanReport): ExportedFile {
  const layers = report.plan.layers;
  const modelParallel = layers.filter((l) => (l.strategy === 'model' || l.strategy === 'hybrid') && l.modelDegree > 1 && l.params > 0);
  const split = modelParallel.filter((l) => wrapperFor(l));
  const unsketched = modelParallel.filter((l) => !wrapperFor(l));
  const pipeline = report.plan.pipeline;
  const fileName = 'wap_placement.py';
  if (modelParallel.length === 0 && !pipeline) {
    return {
      fileName,
      content: `# The plan for ${report.model} is data parallel on ${report.plan.gpus} GPU(s): no layer needs placing.\n# Launch it with DDP instead: wap export --format torchrun\n`,
      description: 'Nothing to place: every layer is data parallel.',
    };
  }
  const classes = [...new Set(split.map((l) => wrapperFor(l)!))];
  const header = [
    `# WAP device-placement preview for ${report.model} (${report.plan.gpus} GPUs on '${report.cluster.name}', batch ${report.batch}).`,
    '# Review before use: WAP never applies this. Layer names are as WAP read them from',
    `# ${report.file ?? 'the model source'}; adjust them if your module paths differ.`,
    '# This is a single-process sketch: the data-parallel layers of a hybrid plan still need DDP',
    '# process groups around it (e.g. torch.distributed.tensor.parallel) to run at the planned speed.',
    '#',
    '# What the plan does:',
    ...split.map((l) => `#   ${l.name} (${l.type}): split ×${l.modelDegree} by ${l.splitDim ?? 'outputs'} over ${cuda(l.devices)} — ${l.reason}`),
    ...unsketched.map((l) => `#   ${l.name} (${l.type}): split ×${l.modelDegree} by ${l.splitDim ?? 'outputs'} — no sketch here; use torch.distributed.tensor.parallel for it`),
    ...(pipeline ? [`#   pipeline: ${pipeline.stages} stages, ${pipeline.microBatches} micro-batches (${pipeline.schedule}), bubble ${(pipeline.bubbleFraction * 100).toFixed(0)}%`] : []),
    'import torch',
    'from torch import nn',
    '',
  ];
  const splitEntries = split.map((l) => `    ${py(l.name)}: (${wrapperFor(l)}, ${cuda(l.devices)}),`);
  const placed = layers.filter((l) => !split.includes(l) && l.devices.length > 0 && isModule(l));
  // Every other layer stays on the first device of its pipeline stage (or cuda:<first device>).
  const homeEntries = placed.map((l) => `    ${py(l.name)}: ${py(`cuda:${Math.min(...l.devices)}`)},`);
  const body = [
    ...classes.map((c) => CLASS_SOURCE[c]),
    '# layer name -> (wrapper, devices) for the layers the plan splits',
    'SPLIT_LAYERS = {',
    ...splitEntries,
    '}',
    '# layer name -> the device it runs on',
    'HOME_DEVICE = {',
    ...homeEntries,
    '}',
    '',
    '',
    'def _move_inputs_to(device):',
    '    # The forward change: each layer first moves its input to its own device.',
    '    def hook(module, args):',
    '        return tuple(a.to(device) if torch.is_tensor(a) else a for a in args)',
    '    return hook',
    '',
    '',
    'def apply_wap_placement(model: nn.Module) -> nn.Module:',
    '    for name, (wrapper, devices) in SPLIT_LAYERS.items():',
    '        parent_name, _, attr = name.rpartition(".")',
    '        parent = model.get_submodule(parent_name) if parent_name else model',
    '        setattr(parent, attr, wrapper(getattr(parent, attr), devices))',
    '    for name, device in HOME_DEVICE.items():',
    '        try:',
    '            layer = model.get_submodule(name)',
    '        except AttributeError:',
    '            print(f"WAP placement: no submodule {name!r}; adjust HOME_DEVICE")',
    '            continue',
    '        layer.to(device).register_forward_pre_hook(_move_inputs_to(device))',
    '    return model',
    '',
    '# Usage, instead of model.to("cuda"):',
    '#     model = apply_wap_placement(MyModel())',
    '# If you prefer editing forward() over hooks, move the activation where the device changes, e.g.',
    ...explicitForwardLines(layers, split),
  ];
  return {
    fileName,
    content: [...header, ...body].join('\n') + '\n',
    description: `Preview only: places ${modelParallel.length} model-parallel layer(s)${pipeline ? ` and ${pipeline.stages} pipeline stages` : ''} with .to(f"cuda:{i}") and matching forward changes; review before applying.`,
  };
}

/** Shows `x = x.to("cuda:k")` before each layer whose device differs from the previous layer's. */
function explicitForwardLines(layers: LayerPlan[], split: LayerPlan[]): string[] {
  const out: string[] = [];
  let prev: string | undefined;
  for (const l of layers) {
    if (l.devices.length === 0) continue;
    const dev = `cuda:${Math.min(...l.devices)}`;
    if (prev !== undefined && dev !== prev && !split.includes(l)) out.push(`#     x = x.to(${py(dev)})  # before ${l.name}`);
    prev = dev; // split wrappers gather their outputs on their first device
    if (out.length >= 8) break;
  }
  return out.length ? out : ['#     (no device change between consecutive layers outside the split ones)'];
}
