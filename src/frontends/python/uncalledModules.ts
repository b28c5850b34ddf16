/**
 * Modules registered in __init__ that forward never runs: a replaced head kept
 * as an attribute, an auxiliary branch of another mode, a layer built and
 * forgotten. torch counts their parameters (`sum(p.numel() for p in
 * model.parameters())`) and `.to(device)` puts them on every GPU, while the
 * graph WAP plans holds what forward runs. Without a word, WAP's count would
 * silently disagree with torch's, so the reading names them, a transformers model's unused parts too (the pooler of
 * a BertModel whose forward takes only the last hidden state).
 */
import type { OpKind, SourceRange } from '../../core/ir';
import type { Graph } from './graph';
import type { Value } from './values';
import { hfGraph } from './transformersModels';

/** Layer kinds that own parameters. */
const PARAMETRIC: ReadonlySet<OpKind> = new Set(['conv', 'separable_conv', 'linear', 'embedding', 'batchnorm', 'layernorm', 'groupnorm', 'mha', 'rnn']);
const SHOWN = 3;

/** The note on the first such module, naming them all; undefined when forward runs every module with parameters. */
export function uncalledModules(g: Graph, paths: ReadonlyMap<object, string>): { range: SourceRange; message: string } | undefined {
  // A layer whose weight forward reads directly (`F.linear(x, self.proj.weight)`) is used without a call.
  const weightsRead = new Set(g.layers.map((l) => l.weightKey ?? l.name));
  const uncalled: Array<{ path: string; type: string; range: SourceRange }> = [];
  for (const [module, path] of paths) {
    const m = module as Value;
    // A transformers model held by the module: the parts of its graph forward never called (a pooler left unused).
    if (m.k === 'hf' && m.what === 'model') {
      for (const layer of hfGraph(m).layers) {
        const name = `${path}.${layer.name}`;
        if (PARAMETRIC.has(layer.op) && !layer.weightKey && !weightsRead.has(name)) uncalled.push({ path: name, type: layer.type, range: m.range });
      }
      continue;
    }
    if (m.k !== 'mod' || m.children || m.composite || !PARAMETRIC.has(m.op) || g.calls.has(m) || weightsRead.has(path)) continue;
    if (m.tiedTo && g.calls.has(m.tiedTo)) continue;
    uncalled.push({ path, type: m.type, range: m.range });
  }
  if (!uncalled.length) return undefined;
  const names = uncalled.slice(0, SHOWN).map((u) => `${u.path} (${u.type})`).join(', ') + (uncalled.length > SHOWN ? `, and ${uncalled.length - SHOWN} more` : '');
  const message = `${uncalled.length === 1 ? 'A module forward never runs holds' : `${uncalled.length} modules forward never runs hold`} parameters: ${names}. torch counts them and they sit on every GPU; the plan holds only what forward runs.`;
  return { range: uncalled[0].range, message };
}
