/**
 * Vision-language checkpoints whose language model is in the catalogue: Gemma 3's 4B, 12B and 27B
 * (Gemma3ForConditionalGeneration, model_type 'gemma3'), whose config.json nests the text model's config under
 * `text_config` beside a `vision_config`. WAP builds the language model the text config describes, the model a
 * text-only fine-tune trains; the vision tower and its projector are not built, though the run holds their weights,
 * so the result says so and is marked incomplete.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import { intField, type HfConfig, type HfHead } from './configs';

/** The text model's config and the note on what is left out, when `config` nests one WAP builds. */
export function nestedLanguageModel(config: HfConfig, className: string, source: string, range: SourceRange, builds: (modelType: string) => boolean): { config: HfConfig; head: (head: HfHead) => HfHead; note: Diagnostic } | undefined {
  const text = config.text_config;
  if (!text || typeof text !== 'object' || Array.isArray(text)) return undefined;
  const fields = text as HfConfig;
  const modelType = typeof fields.model_type === 'string' ? fields.model_type : undefined;
  if (!modelType || !builds(modelType)) return undefined;
  const vision = config.vision_config && typeof config.vision_config === 'object' && !Array.isArray(config.vision_config) ? (config.vision_config as HfConfig) : {};
  const visionType = typeof vision.model_type === 'string' ? vision.model_type : 'a vision encoder';
  const depth = typeof vision.num_hidden_layers === 'number' ? `, ${intField(vision, 'num_hidden_layers')} layers` : '';
  const message = `${className} (${source}) is a vision-language model: WAP builds its language model (text_config, model_type '${modelType}') and not its vision tower (${visionType}${depth}) or the projector, whose weights the run holds too; the plan is the language model's, as a text-only fine-tune runs it, and leaves their memory out`;
  const note: Diagnostic = { severity: 'warning', code: 'hf-vision-tower', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn, incomplete: true, carriesToPlan: true };
  // ForConditionalGeneration is an encoder-decoder's head elsewhere; here it is the decoder's causal LM.
  return { config: { ...fields, model_type: modelType }, head: (head) => (head === 'seq2seq-lm' ? 'causal-lm' : head), note };
}
