/**
 * A Hugging Face model value found in a file → its ModelSpec, built by the
 * catalogue in ../huggingface from the config the file gave (kept apart from
 * models.ts so the evaluator's model reading stays framework-neutral).
 */
import type { Diagnostic, ModelSpec } from '../../core/ir';
import { buildHfModel, type HfModelSpec } from '../huggingface/registry';
import type { HfV } from './values';

/** The graph a model value's config builds, once per value and config (transformersModules.ts reads it for submodules). */
const built = new WeakMap<HfV, { key: string; spec: HfModelSpec }>();

export function hfGraph(model: HfV): HfModelSpec {
  // A config changed after the first build (`model.config.x = …`) builds again.
  const key = JSON.stringify([model.config, model.head, model.encoderOnly]);
  const cached = built.get(model);
  if (cached?.key === key) return cached.spec;
  const spec = buildHfModel({ config: model.config, head: model.head ?? 'base', encoderOnly: model.encoderOnly, name: model.className, className: model.className, range: model.range, source: model.source });
  built.set(model, { key, spec });
  return spec;
}

/** The model a file builds, as WAP plans it: `graph` is the one the run trains (transformersModules.ts hfTrainedGraph). */
export function hfSpec(model: HfV, name: string, diagnostics: Diagnostic[], graph: HfModelSpec): ModelSpec {
  const { outputFields: _fields, ...spec } = graph;
  // Module-level diagnostics (a config field WAP could not compute, …) belong to the instance models, as for torch.
  return { ...spec, name, diagnostics: [...diagnostics, ...spec.diagnostics, ...(model.loadNotes ?? [])] };
}
