/**
 * The evaluator's stand-in for `transformers`: configs and models are values
 * holding a config dict (never transformers' modeling code, which is too
 * dynamic to evaluate). Supported:
 *   LlamaConfig(...), AutoConfig.from_pretrained(ref), AutoConfig.for_model(type, ...),
 *   LlamaForCausalLM(cfg), LlamaForCausalLM.from_pretrained(ref), AutoModelFor*.from_config(cfg),
 *   AutoModelFor*.from_pretrained(ref), `cfg.num_hidden_layers = 4`, `model.config`.
 * The model graph itself is built by ../huggingface from the config.
 */
import type { AttrValue, Diagnostic, SourceRange } from '../../core/ir';
import { autoClassHead, configClassType, modelClassType, POOLER_OFF, uncataloguedModelClass, type HfConfig, type HfHead } from '../huggingface/configs';
import { findPretrainedConfig } from '../huggingface/sources';
import { nestedConfig } from '../huggingface/multimodal';
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { hfModuleAttr } from './transformersModules';
import { hfEmbeddingsMethod, hfEncoderOf } from './transformersEmbeddings';
import { parameterRequiresGrad, requiresGradCall } from './frozenParameters';
import { bitsAndBytesConfig, quantizationOf } from './quantizationCalls';
import { UNKNOWN, bool, list, native, num, str, type CallSite, type HfV, type Value } from './values';
import { toAttr } from './attrValues';
import { constructPart, tiePartWeight } from './transformersParts';

/** from_pretrained keywords that load or place weights but do not change the architecture. */
const LOADER_KWARGS = new Set([
  'torch_dtype', 'device_map', 'revision', 'cache_dir', 'trust_remote_code', 'attn_implementation', 'low_cpu_mem_usage',
  'quantization_config', 'token', 'use_auth_token', 'local_files_only', 'force_download', 'subfolder', 'config', 'use_safetensors', 'variant',
]);

function overrides(kwargs: Map<string, Value>, skipLoader: boolean): HfConfig {
  const out: HfConfig = {};
  for (const [key, value] of kwargs) {
    if (skipLoader && LOADER_KWARGS.has(key)) continue;
    const attr = toAttr(value);
    if (attr !== undefined) out[key] = attr;
  }
  return out;
}

function configValue(config: HfConfig, className: string, source: string, range: SourceRange): HfV {
  return { k: 'hf', what: 'config', config, className, source, range };
}

/** A config WAP cannot get means no model at all: the file (not some other model in it) carries the error, once. */
function fileError(interp: Interp, site: CallSite, message: string, code = 'hf-config-missing'): void {
  const r = site.range;
  interp.diagnostics.push({ severity: 'error', message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, code, ...(r.file ? { file: r.file } : {}) });
}

/** Loads a from_pretrained reference, or records a diagnostic at the call and returns undefined. */
function pretrained(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): { config: HfConfig; source: string } | undefined {
  // `from_pretrained(name, config=config)`: transformers builds the model from the config it is given, not the
  // checkpoint's config.json (Lightning's fine-tuning example passes AutoConfig.from_pretrained(name, num_labels=…)).
  const given = kwargs.get('config');
  if (given?.k === 'hf' && given.what === 'config') return { config: { ...given.config, ...overrides(kwargs, true) }, source: given.source };
  const ref = args[0]?.k === 'str' ? args[0].v : kwargs.get('pretrained_model_name_or_path')?.k === 'str' ? (kwargs.get('pretrained_model_name_or_path') as { v: string }).v : undefined;
  if (ref === undefined) {
    fileError(interp, site, `${site.calleeText}: the model name or folder is not a string WAP can read, so the config (and the model) are unknown`);
    return undefined;
  }
  const found = findPretrainedConfig(ref, interp.file);
  if ('error' in found) {
    fileError(interp, site, `${site.calleeText}('${ref}'): ${found.error}`);
    return undefined;
  }
  return { config: { ...found.config, ...overrides(kwargs, true) }, source: found.path };
}

function modelValue(interp: Interp, config: HfConfig, className: string, head: HfHead, encoderOnly: boolean, source: string, site: CallSite, loadNotes?: Diagnostic[]): Value {
  return { k: 'hf', what: 'model', config: { ...config }, className, head, encoderOnly, source, range: site.range, ...(loadNotes?.length ? { loadNotes } : {}) };
}

/**
 * from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True)) (QLoRA) or load_in_8bit=True loads
 * the weights quantized, which WAP does not model: every plan of the model says so.
 */
/** `transformers.<Class>` or `transformers.<Class>.<method>` (any module path in between). */
export function callTransformers(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const parts = path.split('.');
  let classIndex = -1;
  for (let i = parts.length - 1; i >= 0 && classIndex < 0; i--) if (/^[A-Z]/.test(parts[i])) classIndex = i;
  if (classIndex < 0) return UNKNOWN;
  const cls = parts[classIndex];
  const method = parts[classIndex + 1];
  if (cls === 'BitsAndBytesConfig' && method === undefined) return bitsAndBytesConfig(kwargs);
  const configType = configClassType(cls);
  if (cls === 'AutoConfig' || configType) {
    if (method === undefined && configType) return configValue({ ...overrides(kwargs, false), model_type: configType }, cls, `${cls}(...) with transformers' defaults`, site.range);
    if (method === 'from_pretrained') {
      const loaded = pretrained(interp, args, kwargs, site);
      return loaded ? configValue(configType ? { ...loaded.config, model_type: configType } : loaded.config, cls, loaded.source, site.range) : UNKNOWN;
    }
    if (method === 'for_model' && args[0]?.k === 'str') return configValue({ ...overrides(kwargs, false), model_type: args[0].v }, cls, `AutoConfig.for_model('${args[0].v}')`, site.range);
    return UNKNOWN;
  }
  const auto = autoClassHead(cls);
  const concrete = modelClassType(cls);
  const part = !auto && !concrete && method === undefined ? constructPart(cls, args, kwargs, site) : undefined;
  if (part && 'error' in part) {
    fileError(interp, site, part.error);
    return UNKNOWN;
  }
  if (part) return part;
  if (!auto && !concrete) {
    // transformers' own modeling code is not evaluated: an architecture outside the catalogue is no model at all, said once.
    const why = uncataloguedModelClass(cls);
    if (why) fileError(interp, site, `transformers.${cls} is not in WAP's Hugging Face catalogue (${why}); WAP builds Hugging Face models from their config and does not read transformers' modeling code, so this model is not planned`, 'hf-unknown-architecture');
    return UNKNOWN;
  }
  const head = (auto ?? concrete?.head) as HfHead;
  let config: HfConfig | undefined;
  let source = '';
  if (method === 'from_pretrained') {
    const loaded = pretrained(interp, args, kwargs, site);
    if (!loaded) return UNKNOWN;
    ({ config, source } = loaded);
  } else if (method === 'from_config' || method === '_from_config' || method === undefined) {
    const given = args[0] ?? kwargs.get('config');
    if (given?.k === 'hf' && given.what === 'config') {
      config = given.config;
      source = given.source;
    } else if (method === undefined && concrete && !given) {
      // `GPT2LMHeadModel()` is not valid transformers, but a config-less call means the class's own defaults.
      config = { model_type: concrete.modelType };
      source = `${cls} defaults`;
    } else {
      fileError(interp, site, `${site.calleeText}: its config is not one WAP can read (pass an XConfig(...) or AutoConfig value)`);
      return UNKNOWN;
    }
  } else return UNKNOWN;
  // The attention kernel asked for at load time is kept where transformers keeps it (config._attn_implementation):
  // it decides whether a sliding window skips work (slidingWindow.ts).
  const implementation = kwargs.get('attn_implementation');
  // And the experts kernel (config._experts_implementation, ../huggingface/expertsKernel.ts): grouped or looped.
  const experts = kwargs.get('experts_implementation');
  // A vision-language config nests the language model's (../huggingface/multimodal.ts): the kernel choice and the
  // call's config keywords (`num_hidden_layers=2`) are for it, which WAP builds.
  const text = nestedConfig(config, 'text_config');
  // BertModel(config, add_pooling_layer=False) and its family's base models (RoBERTa, ViT…) build no pooler: an argument of
  // the constructor and of from_pretrained, kept beside the config as the kernels are (configs.ts POOLER_OFF).
  const pooling = kwargs.get('add_pooling_layer') ?? (method === undefined ? args[1] : undefined);
  const kernel: HfConfig = {
    ...(implementation?.k === 'str' ? { _attn_implementation: implementation.v } : {}),
    ...(experts?.k === 'str' ? { _experts_implementation: experts.v } : {}),
    ...(pooling?.k === 'bool' && !pooling.v ? { [POOLER_OFF]: true } : {}),
  };
  config = text ? { ...config, text_config: { ...text, ...(method === 'from_pretrained' ? overrides(kwargs, true) : {}), ...kernel } } : { ...config, ...kernel };
  if (concrete && text?.model_type !== concrete.modelType) {
    const given = config.model_type;
    // CLIPVisionModel / SiglipVisionModel on a dual encoder's checkpoint (model_type 'clip', 'siglip') read its
    // vision_config, as transformers does (multimodal.ts builds that tower): no mismatch.
    const towerOfGiven = typeof given === 'string' && concrete.modelType === `${given}_vision_model`;
    if (typeof given === 'string' && given !== concrete.modelType && !towerOfGiven) {
      interp.warnAt(site.range, `${cls} is a ${concrete.modelType} model but its config says model_type '${given}'; built as ${concrete.modelType}`, 'hf-config-mismatch', 'warning');
    }
    config = { ...config, model_type: concrete.modelType };
  }
  const quantization = method === 'from_pretrained' ? quantizationOf(kwargs, site) : {};
  const model = modelValue(interp, config, cls, head, concrete?.encoderOnly === true, source, site, quantization.note ? [quantization.note] : undefined);
  return quantization.settings && model.k === 'hf' ? { ...model, quantization: quantization.settings } : model;
}

function attrToValue(v: AttrValue | undefined): Value {
  if (v === undefined) return UNKNOWN;
  if (v === null) return { k: 'none' };
  if (typeof v === 'number') return num(v);
  if (typeof v === 'string') return str(v);
  if (typeof v === 'boolean') return bool(v);
  if (Array.isArray(v)) return list(v.map(attrToValue));
  return UNKNOWN;
}

/** `config.hidden_size`, `model.config`, a submodule (`model.bert`, `model.get_input_embeddings()`). */
export function transformersAttr(interp: Interp, obj: HfV, name: string): Value {
  if (obj.what === 'config') return attrToValue(obj.config[name]);
  if (obj.what === 'model' && name === 'config') return { ...obj, what: 'config' };
  if (name === 'requires_grad_') {
    return native(name, (args, kwargs, site) => {
      if (obj.what === 'parameter') parameterRequiresGrad(interp, obj, args[0] ?? kwargs.get('requires_grad') ?? bool(true), site.node);
      else requiresGradCall(interp, obj, args, kwargs, site);
      return obj;
    });
  }
  if (name === 'set_experts_implementation' && obj.what === 'model') {
    // model.set_experts_implementation("eager") switches the experts kernel of a built model (transformers 5), kept as
    // its config's _experts_implementation, which the graph is built from (expertsKernel.ts).
    return native(name, (args, kwargs, site) => {
      const chosen = args[0] ?? kwargs.get('experts_implementation');
      if (chosen?.k !== 'str') {
        interp.warnAt(site.range, `${site.calleeText}: the experts implementation is not a string WAP can read; the experts keep the kernel they had`, 'hf-config-guess', 'warning');
        return { k: 'none' };
      }
      const text = nestedConfig(obj.config, 'text_config');
      if (text) text._experts_implementation = chosen.v;
      obj.config._experts_implementation = chosen.v;
      return { k: 'none' };
    });
  }
  if (name === 'freeze_encoder') {
    // WhisperModel / WhisperForConditionalGeneration.freeze_encoder(): the encoder's `_freeze_parameters()`, which sets
    // requires_grad False on every encoder parameter: the step `model.get_encoder().requires_grad_(False)` records.
    const encoder = hfEncoderOf(obj);
    if (encoder) return native(name, (_args, kwargs, site) => (requiresGradCall(interp, encoder, [bool(false)], kwargs, site), { k: 'none' }));
  }
  return hfEmbeddingsMethod(obj, name) ?? hfModuleAttr(obj, name) ?? UNKNOWN;
}

/** `config.num_hidden_layers = 4` before the model is built; `….weight.requires_grad = False` on a layer's parameter. */
export function transformersSetAttr(interp: Interp, obj: HfV, name: string, value: Value, node: PyNode): void {
  if (obj.what === 'parameter' && name === 'requires_grad') return parameterRequiresGrad(interp, obj, value, node);
  // `self.decoder.weight = embedding_weight` on a part a script built: the weight is now the other module's.
  if (obj.what === 'module' && name === 'weight') {
    if (!tiePartWeight(obj, value)) interp.warn(node, `${obj.module?.path ?? 'a part'}.weight is set to a value WAP cannot follow to its module: the part keeps a weight of its own, so a weight the script shares is counted twice`, 'hf-tie-unread', 'warning');
    return;
  }
  if (obj.what !== 'config') return;
  const attr = toAttr(value);
  if (attr !== undefined) {
    obj.config[name] = attr;
    return;
  }
  // Keeping the old value would be a silent guess: say so where it happens.
  interp.warn(node, `config.${name} is set to a value WAP cannot compute; the model keeps ${JSON.stringify(obj.config[name] ?? 'the default')}`, 'hf-config-guess', 'warning');
  const diag = interp.graph?.diagnostics ?? interp.diagnostics;
  diag[diag.length - 1].incomplete = true;
}
