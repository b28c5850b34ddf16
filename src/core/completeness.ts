/**
 * Whether an analysed model is known to be incomplete: layers WAP could not
 * map (opaque), layers whose shape or workload could not be inferred, and
 * frontend diagnostics that say something was dropped or guessed. Planning a
 * model that is incomplete gives numbers for part of it, so every surface
 * (CLI, hover, plan report, plan view) shows this next to the totals.
 */
import type { AnalyzedLayer, Diagnostic } from './ir';

export interface Completeness {
  complete: boolean;
  /** Layers WAP does not know (op 'opaque'). */
  opaqueLayers: number;
  /** Known layers whose shape and workload could not be inferred (bad attrs, or an unknown layer upstream). */
  unshapedLayers: number;
  /** One line per distinct cause (the flagged diagnostics' messages; the diagnostics carry the ranges). */
  reasons: string[];
}

/**
 * Diagnostic codes that mean part of the model was dropped, cut short or guessed.
 * A frontend can also flag any other diagnostic with `incomplete: true`.
 */
export const INCOMPLETE_CODES: ReadonlySet<string> = new Set([
  'unknown-layer',
  'shape-error',
  'partial-eval',
  'eval-limit',
  'untraced-input',
  'untraced-output',
  'unknown-op',
  'no-forward',
  // A layer called on a value the evaluator could not compute: it and everything after it are missing.
  'lost-tensor',
  // A layer built with a size the evaluator could not compute (a shell variable on the command line): its shape is missing.
  'unknown-size',
  // Modules registered where the evaluator could not list them or compute their names (a ModuleList over a size left None): they are missing.
  'unknown-module-name',
  // A transformers part called on its own in forward (`self.bert.encoder(x)`, a script's subclass of RobertaLMHead): transformers' code builds its layers, so they are missing.
  'unread-hf-part',
]);

const MAX_REASONS = 8;

export function marksIncomplete(d: Diagnostic): boolean {
  return d.incomplete === true || (d.code !== undefined && INCOMPLETE_CODES.has(d.code));
}

export function assessCompleteness(layers: readonly AnalyzedLayer[], diagnostics: readonly Diagnostic[]): Completeness {
  const opaqueLayers = layers.filter((l) => l.op === 'opaque').length;
  const unshapedLayers = layers.filter((l) => l.op !== 'opaque' && l.outputShape === undefined).length;
  const reasons: string[] = [];
  const flagged = diagnostics.filter(marksIncomplete);
  for (const d of flagged) {
    if (reasons.length >= MAX_REASONS) break;
    if (!reasons.includes(d.message)) reasons.push(d.message);
  }
  return { complete: opaqueLayers === 0 && unshapedLayers === 0 && flagged.length === 0, opaqueLayers, unshapedLayers, reasons };
}

/** "incomplete: 3 layers opaque" — the words every surface shows. */
export function describeIncomplete(c: Completeness | undefined): string | undefined {
  if (!c || c.complete) return undefined;
  const parts: string[] = [];
  if (c.opaqueLayers > 0) parts.push(`${c.opaqueLayers} layer${c.opaqueLayers === 1 ? '' : 's'} opaque`);
  if (c.unshapedLayers > 0) parts.push(`${c.unshapedLayers} layer${c.unshapedLayers === 1 ? '' : 's'} without a shape`);
  // The reasons follow this on every surface: the words here say what kind of gap it is, not the reason again.
  if (parts.length === 0) parts.push('parts of the model could not be read');
  return `incomplete: ${parts.join(', ')}`;
}
