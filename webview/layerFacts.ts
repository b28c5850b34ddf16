/**
 * The facts shown for one layer: the same list the editor hover gives
 * (strategy, devices, times with their cost source, sizes, memory, reason),
 * used by the assignment tooltip, its row labels and its text table.
 */
import type { CostSource, LayerPlan } from '../src/protocol/plan';
import { fmtBytes, fmtCount, fmtDevices, fmtMs } from './format';

export function strategyLabel(l: LayerPlan): string {
  switch (l.strategy) {
    case 'data':
      return `data parallel ×${l.dataDegree}`;
    case 'model':
      return `model parallel ×${l.modelDegree}${l.splitDim ? ` (split ${l.splitDim})` : ''}`;
    case 'hybrid':
      return `hybrid ${l.dataDegree} data × ${l.modelDegree} model${l.splitDim ? ` (split ${l.splitDim})` : ''}`;
    case 'pipeline':
      return `pipeline stage ${l.stage}`;
  }
}

export function costSourceLabel(c: CostSource): string {
  if (c.kind === 'analytical') return 'analytical';
  const parts = [c.backend, c.device].filter(Boolean).join(' on ');
  const scaled = c.measuredBatch ? `, measured at batch ${c.measuredBatch} and scaled` : '';
  return `measured${parts ? ` (${parts}${scaled})` : scaled ? ` (${scaled.slice(2)})` : ''}`;
}

export function layerFacts(l: LayerPlan): Array<[string, string]> {
  const facts: Array<[string, string]> = [
    ['Strategy', strategyLabel(l)],
    ['Devices', fmtDevices(l.devices)],
    ['Forward', fmtMs(l.forwardMs)],
    ['Backward', fmtMs(l.backwardMs)],
    ['Cost source', costSourceLabel(l.costSource)],
    ['Parameters', fmtCount(l.params)],
    ['Activations', fmtBytes(l.activationBytes)],
    ['All-reduce', l.allreduceBytes > 0 ? `${fmtBytes(l.allreduceBytes)} in ${fmtMs(l.allreduceMs)}` : 'none'],
  ];
  if (l.transferMs > 0) facts.push(['Re-layout in', fmtMs(l.transferMs)]);
  facts.push(['Memory / GPU', fmtBytes(l.memoryBytesPerGpu)]);
  if (l.alternative) {
    const a = l.alternative;
    facts.push(['Best alternative', `${a.strategy} ${a.dataDegree}×${a.modelDegree}: ${fmtMs(a.costMs)}`]);
  }
  facts.push(['Why', l.reason]);
  return facts;
}

/** Total time a layer costs per iteration on one of its devices. */
export function layerTotalMs(l: LayerPlan): number {
  return l.forwardMs + l.backwardMs + l.allreduceMs + l.transferMs;
}
