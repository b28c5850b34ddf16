/**
 * PEFT's LoRA as a rewrite of a model's IR (Hu et al., ICLR 2022, "LoRA:
 * Low-Rank Adaptation of Large Language Models"; the module as huggingface/peft
 * builds it in peft/tuners/lora/layer.py). `get_peft_model(model, config)`
 * freezes every parameter of the base model and gives each targeted Linear a
 * trainable side path:
 *
 *   y = base(x) + lora_B(lora_A(dropout(x))) · (lora_alpha / r)
 *
 * with lora_A: in → r and lora_B: r → out, both without bias, dropout an
 * Identity when lora_dropout is 0. A targeted convolution gets a lora_A with
 * its kernel, stride and padding and a 1×1 lora_B; an Embedding an r-wide
 * table and r → dim, without dropout (adapterParts). Targets follow peft's
 * check_target_module_exists: a string is a regular expression the module's
 * full name must match; a list matches a name equal to an entry or ending in
 * `.` + entry. Without target_modules, peft picks per model type
 * (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING): the attention query
 * and value projections.
 *
 * `layers_to_transform` keeps the targets inside the listed layer indices
 * (read from `.<layers_pattern>.<index>.` in the name, as peft does), and
 * `modules_to_save` modules train whole beside the adapters; a
 * sequence-classification task adds its classifier head to them, as peft's
 * PeftModelForSequenceClassification does. Settings that change the cost but
 * are priced as plain LoRA (DoRA, trained biases, per-module ranks) are said.
 *
 * Pure IR → IR, so a model read from PyTorch code and one built from a
 * Hugging Face config get the same adapters.
 */
import type { AttrValue, Diagnostic, LayerSpec, ModelSpec, SourceRange } from '../../core/ir';
import { torchParameterNames } from '../freezing/parameterNames';

export interface LoraSettings {
  r: number;
  /**
   * Module names (matched by suffix), one regular expression over the full name, or 'all-linear': every Linear but
   * the output layer (peft leaves the LM head out).
   */
  targets: string[] | { pattern: string } | 'all-linear';
  dropout: number;
  alpha: number;
  /**
   * Modules that train whole beside the adapters (modules_to_save, matched by suffix; a sequence-classification
   * task adds peft's classifier names, `classifier` and `score`).
   */
  modulesToSave: string[];
  /** layers_to_transform: only targets inside these decoder/encoder layer indices, found by `layersPattern`. */
  layers?: { indices: number[]; patterns: string[] };
  /** Settings read but not modelled (use_dora, bias, rank_pattern): said in a warning. */
  unmodelled: string[];
  /** The get_peft_model call, for diagnostics. */
  range: SourceRange;
}

/** peft's layer-list names for layers_to_transform without layers_pattern (peft/utils/constants.py COMMON_LAYERS_PATTERN). */
export const COMMON_LAYERS_PATTERN: readonly string[] = ['layers', 'h', 'block', 'blocks', 'layer'];

/** Module names peft adds to modules_to_save for a sequence-classification task (PeftModelForSequenceClassification). */
export const CLASSIFIER_MODULE_NAMES: readonly string[] = ['classifier', 'score'];

/**
 * peft's default target modules per Hugging Face model_type (peft/utils/constants.py,
 * TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING), for the types WAP builds. phi3 is not in peft's table (only
 * "phi" is, with Phi-1/2's module names): peft asks for target_modules, so a LoraConfig without them stays unread.
 */
export const DEFAULT_LORA_TARGETS: Readonly<Record<string, readonly string[]>> = {
  t5: ['q', 'v'],
  mt5: ['q', 'v'],
  bert: ['query', 'value'],
  roberta: ['query', 'value'],
  'xlm-roberta': ['query', 'value'],
  camembert: ['query', 'value'],
  distilbert: ['q_lin', 'v_lin'],
  vit: ['query', 'value'],
  gpt2: ['c_attn'],
  gpt_neox: ['query_key_value'],
  llama: ['q_proj', 'v_proj'],
  mistral: ['q_proj', 'v_proj'],
  mixtral: ['q_proj', 'v_proj'],
  qwen2: ['q_proj', 'v_proj'],
  gemma: ['q_proj', 'v_proj'],
  gemma2: ['q_proj', 'v_proj'],
  gemma3_text: ['q_proj', 'v_proj'],
  qwen3: ['q_proj', 'v_proj'],
  qwen3_moe: ['q_proj', 'v_proj'],
};

/** A target test narrowed to layers_to_transform: the layer index peft reads from `.<pattern>.<index>.` in the name. */
function withinLayers(test: (layer: LayerSpec) => boolean, layers: LoraSettings['layers']): (layer: LayerSpec) => boolean {
  if (!layers) return test;
  const index = new RegExp(`\\.(?:${layers.patterns.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})\\.(\\d+)\\.`);
  return (l) => {
    const m = index.exec(`.${l.name}`);
    return !!m && layers.indices.includes(Number(m[1])) && test(l);
  };
}

/** Whether a layer sits in (or is) a module modules_to_save names: some prefix of its path ends with the name. */
function inSavedModule(name: string, saved: readonly string[]): boolean {
  if (saved.length === 0) return false;
  const parts = name.split('.');
  for (let i = 1; i <= parts.length; i++) {
    const prefix = parts.slice(0, i).join('.');
    if (saved.some((m) => prefix === m || prefix.endsWith(`.${m}`))) return true;
  }
  return false;
}

/** peft's target test for one model: a predicate over its layers. An invalid regular expression matches nothing. */
function targetMatcher(targets: LoraSettings['targets'], outputs: ReadonlySet<string>): (layer: LayerSpec) => boolean {
  if (targets === 'all-linear') return (l) => l.op === 'linear' && !outputs.has(l.id) && !/(^|\.)lm_head$/.test(l.name);
  if (Array.isArray(targets)) return (l) => targets.some((t) => l.name === t || l.name.endsWith(`.${t}`));
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${targets.pattern})$`);
  } catch {
    return () => false;
  }
  return (l) => pattern.test(l.name);
}

const diagnosticAt = (severity: Diagnostic['severity'], code: string, message: string, r: SourceRange): Diagnostic => ({ severity, code, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn });

/**
 * The model with its base frozen and a LoRA path beside each targeted Linear. A target on another layer type
 * (peft also adapts Conv2d and Embedding) or a Linear of unknown size is said, not silently skipped.
 */
export function withLoraAdapters(spec: ModelSpec, lora: LoraSettings): ModelSpec {
  const layers: LayerSpec[] = [];
  const diagnostics: Diagnostic[] = [];
  const renamed = new Map<string, string>();
  const ids = new Set(spec.layers.map((l) => l.id));
  const fresh = (base: string): string => {
    let id = base;
    for (let n = 2; ids.has(id); n++) id = `${base}#${n}`;
    ids.add(id);
    return id;
  };
  const unadapted = new Set<string>();
  let adapted = 0;
  const isTarget = withinLayers(targetMatcher(lora.targets, new Set(spec.outputs)), lora.layers);
  let saved = 0;
  for (const original of spec.layers) {
    // A module peft saves trains whole (its trainable copy); a quantized weight never trains.
    const trains = inSavedModule(original.name, lora.modulesToSave) && !original.quantizedWeights;
    if (trains && (torchParameterNames(original.op, original.attrs)?.length ?? 0) > 0) saved++;
    const { frozen: _frozen, ...unfrozen } = original;
    const layer: LayerSpec = { ...(trains ? unfrozen : { ...original, frozen: true }), inputs: original.inputs.map((i) => renamed.get(i) ?? i) };
    layers.push(layer);
    if (!isTarget(layer)) continue;
    const parts = adapterParts(layer, lora.r);
    if (!parts) {
      unadapted.add(`${layer.name} (${layer.type})`);
      continue;
    }
    adapted++;
    // A module called twice (`name#2`) shares its adapters with the first call, as it shares its weights.
    const owner = layer.weightKey ?? layer.name;
    const side = (suffix: string, part: Omit<LayerSpec, 'id' | 'name' | 'range'>): string => {
      const id = fresh(`${layer.id}.${suffix}`);
      layers.push({ ...part, id, name: `${layer.name}.${suffix}`, range: layer.range, ...(layer.callRange ? { callRange: layer.callRange } : {}) });
      return id;
    };
    const x = layer.inputs[0];
    // peft's embedding adapter looks its rows up directly: no dropout on token ids.
    const dropped = lora.dropout > 0 && layer.op !== 'embedding' ? side('lora_dropout', { type: 'Dropout', op: 'dropout', attrs: { rate: lora.dropout }, inputs: [x] }) : x;
    const a = side(parts.names[0], { ...parts.a, inputs: [dropped], weightKey: `${owner}.${parts.names[0]}` });
    const b = side(parts.names[1], { ...parts.b, inputs: [a], weightKey: `${owner}.${parts.names[1]}` });
    const scaled = side('lora_scaling', { type: 'mul', op: 'mul', attrs: { scalar: lora.alpha / lora.r }, inputs: [b] });
    renamed.set(layer.id, side('lora_add', { type: 'add', op: 'add', attrs: {}, inputs: [layer.id, scaled] }));
  }
  if (adapted === 0) {
    diagnostics.push(diagnosticAt('warning', 'lora-no-target', `LoRA's target modules (${describe(lora.targets)}) match no layer of ${spec.name} WAP can adapt: the plan trains nothing but the base model's frozen forward`, lora.range));
  }
  if (unadapted.size > 0) {
    const list = [...unadapted];
    diagnostics.push(diagnosticAt('warning', 'lora-unmodelled-target', `LoRA targets ${list.slice(0, 3).join(', ')}${list.length > 3 ? ` and ${list.length - 3} more` : ''}: WAP models LoRA on Linear, convolution and Embedding layers of known size only, so these carry no adapter in the plan`, lora.range));
  }
  if (lora.unmodelled.length > 0) {
    diagnostics.push({ ...diagnosticAt('warning', 'lora-unmodelled', `LoRA settings WAP does not model: ${lora.unmodelled.join('; ')}. The plan prices plain LoRA for them`, lora.range), carriesToPlan: true });
  }
  if (lora.modulesToSave.length > 0 && saved === 0) {
    diagnostics.push(diagnosticAt('warning', 'lora-no-target', `modules_to_save (${lora.modulesToSave.join(', ')}) names no module of ${spec.name}: nothing beside the adapters trains`, lora.range));
  }
  const whole = saved > 0 ? `; ${saved} layers with weights in modules_to_save (${lora.modulesToSave.join(', ')}) train whole` : '';
  const onLayers = lora.layers ? ` in layers ${lora.layers.indices.join(', ')}` : '';
  diagnostics.push(diagnosticAt('info', 'lora', `LoRA (r=${lora.r}, alpha ${lora.alpha}, dropout ${lora.dropout}) on ${adapted} layers (${describe(lora.targets)}${onLayers}); the base model is frozen${whole}`, lora.range));
  return { ...spec, layers, outputs: spec.outputs.map((o) => renamed.get(o) ?? o), diagnostics: [...spec.diagnostics, ...diagnostics] };
}

/** The id that holds layer `id`'s output once adapted: its `lora_add` where LoRA targets it, else `id` itself. */
export function adaptedOutput(layers: readonly LayerSpec[], id: string): string {
  return layers.find((l) => l.op === 'add' && l.inputs[0] === id && l.id === `${id}.lora_add`)?.id ?? id;
}

type AdapterPart = Pick<LayerSpec, 'type' | 'op' | 'attrs'>;

/**
 * The two low-rank layers peft puts beside a targeted layer (peft/tuners/lora/layer.py): a Linear gets lora_A (in → r)
 * and lora_B (r → out); a convolution lora_A with its kernel, stride and padding (in → r channels) and a 1×1 lora_B
 * (r → out); an Embedding lora_embedding_A, a table of r-wide rows, and lora_embedding_B (r → embedding dim). None
 * for other layers or sizes WAP does not know.
 */
function adapterParts(layer: LayerSpec, r: number): { names: [string, string]; a: AdapterPart; b: AdapterPart } | undefined {
  const at = layer.attrs;
  const linear = (inFeatures: number, outFeatures: number): AdapterPart => ({ type: 'Linear', op: 'linear', attrs: { inFeatures, outFeatures, bias: false } });
  if (layer.op === 'linear' && typeof at.inFeatures === 'number' && typeof at.outFeatures === 'number') {
    return { names: ['lora_A', 'lora_B'], a: linear(at.inFeatures, r), b: linear(r, at.outFeatures) };
  }
  if (layer.op === 'embedding' && typeof at.numEmbeddings === 'number' && typeof at.embeddingDim === 'number') {
    return { names: ['lora_embedding_A', 'lora_embedding_B'], a: { type: 'Embedding', op: 'embedding', attrs: { numEmbeddings: at.numEmbeddings, embeddingDim: r } }, b: linear(r, at.embeddingDim) };
  }
  const rank = at.rank;
  if (layer.op === 'conv' && !at.transposed && typeof rank === 'number' && typeof at.inChannels === 'number' && typeof at.outChannels === 'number') {
    const ones = Array.from({ length: rank }, () => 1);
    const conv = (attrs: Record<string, AttrValue>): AdapterPart => ({ type: `Conv${rank}d`, op: 'conv', attrs: { rank, dilation: ones, groups: 1, bias: false, ...attrs } });
    return {
      names: ['lora_A', 'lora_B'],
      a: conv({ inChannels: at.inChannels, outChannels: r, kernel: at.kernel, stride: at.stride, padding: at.padding }),
      b: conv({ inChannels: r, outChannels: at.outChannels, kernel: ones, stride: ones, padding: 'valid' }),
    };
  }
  return undefined;
}

function describe(targets: LoraSettings['targets']): string {
  return targets === 'all-linear' ? 'all-linear' : Array.isArray(targets) ? targets.join(', ') : `/${targets.pattern}/`;
}
