/**
 * The Hugging Face model catalogue: model_type → the builder that turns a
 * config into WAP's IR with transformers' own module names. Pure (no files):
 * sources.ts finds configs, the Python and JSON frontends call `buildHfModel`.
 */
import type { Diagnostic, LayerSpec, ModelSpec, SourceRange } from '../../core/ir';
import { buildBertFamily, isRobertaLayout } from './bert';
import { buildDistilBert } from './distilbert';
import { buildDebertaV2 } from './deberta';
import { buildModernBert } from './modernbert';
import { buildComposedModel } from './multimodal';
import { intField, knownModelTypes, withDefaults, type HfConfig, type HfHead } from './configs';
import { buildLlamaFamily, type BuildContext } from './decoder';
import { buildDeepseek } from './deepseek';
import { buildGemma2 } from './gemma2';
import { buildGpt2, buildGptNeox } from './gpt';
import { buildGptOss } from './gptOss';
import { buildOlmo2 } from './olmo2';
import { buildPhi } from './phi';
import { HfGraph } from './graph';
import { buildPhi3 } from './phi3';
import { buildT5 } from './t5';
import { buildVit } from './vit';
import { buildVisionModel } from './visionTowers';
import { buildBart } from './bart';
import { buildWhisper } from './whisper';

type Builder = (ctx: BuildContext, encoderOnly: boolean) => string[];

const BUILDERS: Record<string, { build: Builder; heads: HfHead[] }> = {
  llama: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  mistral: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  mixtral: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  qwen2: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  gemma: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  qwen3: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  qwen3_moe: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  qwen2_moe: { build: buildLlamaFamily, heads: ['base', 'causal-lm', 'sequence-classification'] },
  deepseek_v2: { build: buildDeepseek, heads: ['base', 'causal-lm', 'sequence-classification'] },
  deepseek_v3: { build: buildDeepseek, heads: ['base', 'causal-lm'] },
  phi3: { build: buildPhi3, heads: ['base', 'causal-lm', 'sequence-classification'] },
  gemma2: { build: buildGemma2, heads: ['base', 'causal-lm', 'sequence-classification'] },
  gemma3_text: { build: buildGemma2, heads: ['base', 'causal-lm'] },
  gpt2: { build: buildGpt2, heads: ['base', 'causal-lm', 'sequence-classification'] },
  gpt_neox: { build: buildGptNeox, heads: ['base', 'causal-lm'] },
  gpt_oss: { build: buildGptOss, heads: ['base', 'causal-lm'] },
  olmo2: { build: buildOlmo2, heads: ['base', 'causal-lm'] },
  phi: { build: buildPhi, heads: ['base', 'causal-lm', 'sequence-classification'] },
  bert: { build: buildBertFamily, heads: ['base', 'masked-lm', 'pre-training', 'sequence-classification', 'token-classification', 'question-answering'] },
  roberta: { build: buildBertFamily, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  'xlm-roberta': { build: buildBertFamily, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  camembert: { build: buildBertFamily, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  distilbert: { build: buildDistilBert, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  modernbert: { build: buildModernBert, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  'deberta-v2': { build: buildDebertaV2, heads: ['base', 'masked-lm', 'sequence-classification', 'token-classification', 'question-answering'] },
  t5: { build: buildT5, heads: ['base', 'seq2seq-lm'] },
  mt5: { build: buildT5, heads: ['base', 'seq2seq-lm'] },
  vit: { build: buildVit, heads: ['base', 'image-classification'] },
  clip_vision_model: { build: buildVisionModel, heads: ['base'] },
  siglip_vision_model: { build: buildVisionModel, heads: ['base'] },
  bart: { build: buildBart, heads: ['base', 'seq2seq-lm', 'sequence-classification'] },
  mbart: { build: buildBart, heads: ['base', 'seq2seq-lm', 'sequence-classification'] },
  whisper: { build: buildWhisper, heads: ['base', 'seq2seq-lm'] },
};

/** A built model with its ModelOutput fields (HfGraph.fields); an opaque model has none. */
export interface HfModelSpec extends ModelSpec {
  outputFields?: ReadonlyMap<string, string>;
}

/** What the file asked for: a config (as given, not yet defaulted), the head, and where. */
export interface HfModelRequest {
  /** The config's fields as written (config.json or XConfig(...) keywords); must carry model_type. */
  config: HfConfig;
  head: HfHead;
  encoderOnly?: boolean;
  /** The model's name in WAP (the variable, or the config file's name). */
  name: string;
  /** The class as the user wrote it, for messages and the model's type ('LlamaForCausalLM'). */
  className: string;
  range: SourceRange;
  /** Where the config came from, in words ("./llama/config.json", "LlamaConfig(...) defaults"). */
  source: string;
}

/**
 * The positions a RoBERTa-family table spends before the first token: its position ids start after the padding index
 * (modeling_roberta.py, create_position_ids_from_input_ids), so of xlm-roberta-base's 514 rows 512 are tokens.
 */
function reservedPositions(config: HfConfig): number {
  const offset = isRobertaLayout(config.model_type) ? config.pad_token_id : undefined;
  return typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 ? offset + 1 : 0;
}

/** The context length the model was configured for, and the config key it came from. */
function configuredLength(config: HfConfig): { length: number; key: string } {
  // Whisper's decoder has max_target_positions learned positions (its encoder's length is fixed by its features).
  for (const key of ['max_position_embeddings', 'n_positions', 'n_ctx', 'max_target_positions']) {
    const v = config[key];
    const reserved = key === 'max_position_embeddings' ? reservedPositions(config) : 0;
    if (typeof v === 'number' && Number.isInteger(v) && v > reserved) return { length: v - reserved, key: reserved ? `${key} (less the ${reserved} positions RoBERTa reserves before the first token)` : key };
  }
  // T5 has relative positions and no maximum; its pre-training used 512 tokens (Raffel et al., 2020, §3.1.2).
  return { length: 512, key: 'T5 pre-training length' };
}

function diag(severity: Diagnostic['severity'], code: string, message: string, r: SourceRange, incomplete = false): Diagnostic {
  return { severity, code, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, ...(incomplete ? { incomplete: true } : {}) };
}

function opaqueModel(req: HfModelRequest, reason: string): ModelSpec {
  const layer: LayerSpec = { id: req.className, name: req.className, type: req.className, op: 'opaque', attrs: { reason }, inputs: [], range: req.range };
  return {
    name: req.name,
    framework: 'pytorch',
    range: req.range,
    layout: 'channels_first',
    inputs: [{ id: 'input_ids', dtype: 'int' }],
    layers: [layer],
    outputs: [layer.id],
    diagnostics: [diag('warning', 'hf-unsupported', `${req.className} (${req.source}): ${reason}`, req.range, true)],
  };
}

export function supportedModelTypes(): string[] {
  return Object.keys(BUILDERS);
}

/**
 * Builds the model a config describes; never throws: problems come back as an opaque layer with a diagnostic.
 * Token inputs get the config's context length, marked assumed and length-free (the graph's views keep the
 * token count -1), so the analysis may replace it with `--seq-len` or `--input`; it warns past the positions.
 */
export function buildHfModel(req: HfModelRequest): HfModelSpec {
  // Configs that nest others (a vision-language model's text_config and vision_config) are built in multimodal.ts.
  const composed = buildComposedModel(req, { builds: (type) => type in BUILDERS, build: buildHfModel });
  if (composed) return composed;
  const modelType = typeof req.config.model_type === 'string' ? req.config.model_type : undefined;
  if (!modelType) return opaqueModel(req, 'the config has no model_type, so WAP cannot tell the architecture');
  const entry = BUILDERS[modelType];
  if (!entry) return opaqueModel(req, `model_type '${modelType}' is not in WAP's Hugging Face catalogue (known: ${knownModelTypes().join(', ')})`);
  if (!entry.heads.includes(req.head)) return opaqueModel(req, `WAP's catalogue has no '${req.head}' head for ${modelType} (known: ${entry.heads.join(', ')})`);
  const config = withDefaults(modelType, req.config);
  const configured = configuredLength(config);
  const graph = new HfGraph(req.range);
  const ctx: BuildContext = { graph, config, head: req.head, seqLen: configured.length };
  let outputs: string[];
  try {
    outputs = entry.build(ctx, req.encoderOnly === true);
  } catch (e) {
    return opaqueModel(req, `cannot build ${modelType} from this config: ${e instanceof Error ? e.message : String(e)}`);
  }
  const positions = config.max_position_embeddings ?? config.n_positions ?? config.max_target_positions;
  const maxLength = typeof positions === 'number' ? { maxLength: { tokens: configured.length, what: `${req.className} is configured for (${req.source})` } } : {};
  const inputs = graph.inputs.map((i) =>
    i.dtype === 'int'
      ? { ...i, assumed: `the ${configured.key} of ${req.source} (${configured.length} tokens)`, lengthFree: true, ...maxLength }
      : i.dtype === 'float'
        ? { ...i, assumed: i.assumed ?? `the config's image_size` }
        : i,
  );
  return {
    name: req.name,
    framework: 'pytorch',
    range: req.range,
    layout: 'channels_first',
    inputs,
    layers: graph.layers,
    outputs,
    outputFields: graph.fields,
    diagnostics: [diag('info', 'hf-config', `${req.className} built from ${req.source} (model_type '${modelType}', ${intField(config, 'num_hidden_layers', intField(config, 'n_layer', intField(config, 'num_layers', intField(config, 'encoder_layers', 0))))} layers)`, req.range), ...graph.diagnostics],
  };
}
