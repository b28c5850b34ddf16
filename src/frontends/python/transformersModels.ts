/**
 * A Hugging Face model value found in a file → its ModelSpec, built by the
 * catalogue in ../huggingface from the config the file gave (kept apart from
 * models.ts so the evaluator's model reading stays framework-neutral).
 */
import type { Diagnostic, ModelSpec } from '../../core/ir';
import { buildHfModel } from '../huggingface/registry';
import type { HfV } from './values';

export function hfSpec(model: HfV, name: string, diagnostics: Diagnostic[]): ModelSpec {
  const spec = buildHfModel({ config: model.config, head: model.head ?? 'base', encoderOnly: model.encoderOnly, name, className: model.className, range: model.range, source: model.source });
  // Module-level diagnostics (a config field WAP could not compute, …) belong to the instance models, as for torch.
  return { ...spec, diagnostics: [...diagnostics, ...spec.diagnostics, ...(model.loadNotes ?? [])] };
}
