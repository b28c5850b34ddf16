/**
 * Vision-language checkpoints whose language model is in the catalogue: Gemma 3's 4B, 12B and 27B
 * (Gemma3ForConditionalGeneration, model_type 'gemma3'), whose config.json nests the text model's config under
 * `text_config` beside a `vision_config`. WAP builds the language model the text config describes, the model a
 * text-only fine-tune trains; the vision tower and its projector are not built, though the run holds their weights,
 * so the result says so and is marked incomplete.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import { intField, type HfConfig, type HfHead } from './configs';

/** A config nested under `key` (`text_config`, `vision_config`), if the field holds one. */
export function nestedConfig(config: HfConfig, key: string): HfConfig | undefined {
  const v = config[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as HfConfig) : undefined;
}

/** The text model's config and the note on what is left out, when `config` nests one WAP builds. */
export function nestedLanguageModel(config: HfConfig, className: string, source: string, range: SourceRange, builds: (modelType: string) => boolean): { config: HfConfig; head: (head: HfHead) => HfHead; note: Diagnostic } | undefined {
  const fields = nestedConfig(config, 'text_config');
  const modelType = typeof fields?.model_type === 'string' ? fields.model_type : undefined;
  if (!fields || !modelType || !builds(modelType)) return undefined;
  const vision = nestedConfig(config, 'vision_config') ?? {};
  const visionType = typeof vision.model_type === 'string' ? vision.model_type : 'a vision encoder';
  const depth = typeof vision.num_hidden_layers === 'number' ? `, ${intField(vision, 'num_hidden_layers')} layers` : '';
  const message = `${className} (${source}) is a vision-language model: WAP builds its language model (text_config, model_type '${modelType}') and not its vision tower (${visionType}${depth}) or the projector, whose weights the run holds too; the plan is the language model's, as a text-only fine-tune runs it, and leaves their memory out`;
  const note: Diagnostic = { severity: 'warning', code: 'hf-vision-tower', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn, incomplete: true, carriesToPlan: true };
  // ForConditionalGeneration is an encoder-decoder's head elsewhere; here it is the decoder's causal LM.
  return { config: { ...fields, model_type: modelType }, head: (head) => (head === 'seq2seq-lm' ? 'causal-lm' : head), note };
}
