/**
 * A transformers model called inside a script's own forward: `self.bert(input_ids=…, attention_mask=…)` in a
 * classifier that wraps BertModel, the commonest fine-tuning layout, or the encoder of DeepSpeedExamples'
 * HelloDeepSpeed. The model's layers are the catalogue's graph for its config (../huggingface), as the run trains it
 * (the script's freezes, bitsandbytes' quantized weights), recorded into the script's graph under the attribute's
 * module path (`bert.encoder.layer.0.attention.self.query`, the name torch gives it) and fed by the tensors the call
 * passes. The call returns transformers' ModelOutput: its fields by attribute, key and position, or a tuple with
 * `return_dict=False`. A part called on its own (`self.bert.encoder(h)`, a `BertLayer(config)` the script built:
 * transformersParts.ts) records the model graph's layers under its path.
 */
import { inferLayer, isInferError } from '../../core/catalogue/index';
import type { Diagnostic, LayerSpec, ModelInput } from '../../core/ir';
import type { HfModelSpec } from '../huggingface/registry';
import type { Interp } from './interpreter';
import { hfModuleLayout } from '../huggingface/moduleLayouts';
import { hfBaseModelPath, hfTrainedGraph, joinModulePath } from './transformersModules';
import { matchPartInputs, partLayers } from './transformersPartInputs';
import { hfGraph } from './transformersModels';
import { partWeightTies } from './transformersParts';
import { loraOf } from './peftCalls';
import { adaptedOutput, withLoraAdapters, type LoraSettings } from '../peft/lora';
import { UNKNOWN, str, type CallSite, type DictV, type Dims, type HfV, type TensorV, type Value } from './values';

/**
 * Two token counts to read the graph's shapes at when the call's own length is unknown: a dimension that comes out
 * the same at both does not depend on the length (hidden_size, num_labels), one that differs does and stays unknown.
 * Distinct primes, so no size the config sets is a multiple of both by chance.
 */
const PROBE_LENGTHS = [7, 11] as const;

/** Calling a transformers model inside a forward being read; UNKNOWN (with a warning) where its graph cannot be recorded. */
export function callHfModel(interp: Interp, model: HfV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const g = interp.graph;
  if (!g || g.framework !== 'pytorch') return UNKNOWN;
  const what = g.paths.get(model) ?? model.className;
  if (model.what === 'module' && model.module) return callHfPart(interp, model, model.module, args, kwargs, site);
  if (model.what !== 'model') return UNKNOWN;
  const spec = builtGraph(interp, model, site);
  if (!spec) return UNKNOWN;
  const fed = fedInputs(spec, args, kwargs);
  if ('missing' in fed) {
    interp.warnAt(site.range, `${what} (${model.className}) is called without ${fed.missing} as a tensor the evaluator could compute; it and the layers after it are missing`, 'lost-tensor');
    return UNKNOWN;
  }
  if (kwargs.has('labels') && !spec.outputFields.has('loss')) g.diagnostics.push(unbuiltLoss(what, model, site));
  const fields = returnedFields(spec.outputFields, kwargs.has('labels'));
  const kept = feeding(spec.layers, [...fields.values(), ...sideComputations(spec)]);
  const probes = probeShapes(spec, kept, fed);
  const ids = new Map<string, string>(spec.inputs.map((input) => [input.id, fed.get(input.id)!.id]));
  const prefix = g.paths.get(model);
  const named = (name: string): string => (prefix ? `${prefix}.${name}` : name);
  for (const input of spec.inputs) noteTokenLimit(g.inputs, fed.get(input.id)!, input);
  for (const layer of kept) {
    const { id, name, weightKey, inputs, ...rest } = layer;
    const recorded = g.add({ ...rest, name: named(name), inputs: inputs.map((i) => ids.get(i) ?? i), callRange: site.range, ...(weightKey ? { weightKey: named(weightKey) } : {}) }, probes.get(id), named(name));
    ids.set(id, recorded.id);
  }
  const values = [...fields].map(([field, id]): [string, Value] => {
    const recorded = ids.get(id)!;
    const out: TensorV = { k: 'tensor', id: recorded, shape: g.shapes.get(recorded), framework: 'pytorch' };
    return [field, out];
  });
  const returnDict = kwargs.get('return_dict');
  if (returnDict?.k === 'bool' && !returnDict.v) return { k: 'tuple', items: values.map(([, v]) => v) };
  return modelOutput(model.className, values);
}

/** Heads whose loss is a log-softmax over the vocabulary at every token: as large as the logits, kept for the backward. */
const VOCABULARY_LOSS_HEADS: ReadonlySet<string> = new Set(['causal-lm', 'masked-lm', 'pre-training', 'seq2seq-lm']);

/**
 * transformers computes the loss whenever labels are given. Where the catalogue's graph has none (T5's), the step is
 * priced short of it: for a vocabulary the model is incomplete; over a classifier's few labels it is a note.
 */
function unbuiltLoss(what: string, model: HfV, site: CallSite): Diagnostic {
  const r = site.range;
  const vocabulary = VOCABULARY_LOSS_HEADS.has(model.head ?? 'base');
  const message = `${what} (${model.className}) is given labels, so its forward computes a loss, which WAP's graph of this model does not build: ${vocabulary ? "the loss and the log-probabilities it keeps for the backward are missing" : "its few values per sample are not priced"}`;
  return { severity: vocabulary ? 'warning' : 'info', code: 'hf-unbuilt-loss', message, ...(vocabulary ? { incomplete: true } : {}), line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, ...(r.file ? { file: r.file } : {}) };
}

/** A graph the catalogue built, with its ModelOutput fields. */
type BuiltGraph = HfModelSpec & { outputFields: ReadonlyMap<string, string> };

/** Per graph being recorded, the models whose config a call has said (builtGraph). */
const configsSaid = new WeakMap<object, WeakSet<HfV>>();

/** The graph a call records, its build diagnostics said at the call; undefined where it is not one WAP built. */
function builtGraph(interp: Interp, model: HfV, site: CallSite, sayConfig = true): BuiltGraph | undefined {
  const spec = adapted(hfTrainedGraph(model), loraOf(model));
  // Which config built the model is said at its first call in a forward: its parts called one by one say it once.
  const configSaid = configsSaid.get(interp.graph!) ?? new WeakSet<HfV>();
  configsSaid.set(interp.graph!, configSaid);
  const newConfig = sayConfig && !configSaid.has(model);
  if (sayConfig) configSaid.add(model);
  const said = spec.diagnostics.filter((d) => d.severity !== 'info' || (newConfig && d.code === 'hf-config') || d.code === 'lora');
  const r = site.range;
  for (const d of said) interp.graph!.diagnostics.push({ ...d, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn });
  return spec.outputFields && !spec.layers.some((l) => l.op === 'opaque') ? (spec as BuiltGraph) : undefined;
}

/**
 * A part called on its own: a submodule of a model the script holds (`self.bert.encoder(x)`, `self.bert.embeddings(ids)`)
 * or a block it built (`BertLayer(config)`, transformersParts.ts). Its layers are the model graph's under its path,
 * each tensor they take from outside it fed by the call's argument for it (transformersPartInputs.ts: a decoder's
 * ids and the encoder's output); what it returns is transformers 4.46's: a block (a path ending
 * in an index) the tuple `(hidden_states,)`, an encoder or decoder stack its ModelOutput, anything else the tensor.
 */
function callHfPart(interp: Interp, part: HfV, at: NonNullable<HfV['module']>, args: Value[], kwargs: Map<string, Value>, site: CallSite, ownPath?: string): Value {
  const g = interp.graph!;
  const rootPath = at.own ? undefined : g.paths.get(at.root);
  const partPath = ownPath ?? g.paths.get(part);
  const name = at.own ? (partPath ?? part.className) : rootPath ? `${rootPath}.${at.path}` : at.path;
  // A part built one block deep is no model of that depth: the build's layer count would mislead.
  const spec = builtGraph(interp, at.root, site, !at.own);
  if (!spec) return UNKNOWN;
  const slice = partLayers(spec.layers, at.path);
  const inside = new Set(slice.map((l) => l.id));
  const external = [...new Set(slice.flatMap((l) => l.inputs).filter((i) => !inside.has(i)))];
  const unread = (why: string): Value => {
    interp.warnAt(site.range, `${name} (${part.className === at.root.className ? `${at.path} of ${at.root.className}` : part.className}) ${why}: it and the layers after it are missing`, 'unread-hf-part');
    return UNKNOWN;
  };
  if (slice.length === 0) return unread('holds no layer WAP builds');
  if (external.length === 0) return unread('takes no tensor from the call');
  const fed = matchPartInputs({ spec, path: at.path, encoderPath: encoderStackPath(at.root) }, external, args, kwargs);
  if ('unread' in fed) return unread(fed.unread);
  const consumed = new Set(slice.flatMap((l) => l.inputs));
  const out = [...slice].reverse().find((l) => !consumed.has(l.id))!;
  // Names as torch gives them: under the part's own attribute, or under the model that holds it.
  const held = at.own ? partPath : rootPath;
  const rename = (layerName: string): string => {
    const relative = at.own ? layerName.slice(at.path.length) : `.${layerName}`;
    return held ? `${held}${relative}` : relative.slice(1) || at.path;
  };
  const probes = probeShapes(spec, spec.layers, new Map());
  for (const input of spec.inputs) if (fed.has(input.id)) noteTokenLimit(g.inputs, fed.get(input.id)!, input);
  // Every outside tensor reads the call's: the decoder's cross-attention keys and values the encoder output passed,
  // at its own length, which the shapes recorded below follow.
  const ids = new Map<string, string>([...fed].map(([id, tensor]) => [id, tensor.id!]));
  // A weight tied outside the part (an LM head's decoder to the word embeddings) is the holding model's; a part
  // built by its own class holds its own (the tie is the whole model's tie_weights).
  const tiedKey = (key: string): string | undefined => (key === at.path || key.startsWith(`${at.path}.`) ? rename(key) : at.own ? undefined : rootPath ? `${rootPath}.${key}` : key);
  const tiedByScript = partWeightTies(at.root);
  for (const layer of slice) {
    const { id, name: layerName, weightKey, inputs, ...rest } = layer;
    const tie = tiedByScript?.get(layerName);
    const key = tie ? ownerKey(g.paths, tie) : weightKey ? tiedKey(weightKey) : undefined;
    const recorded = g.add({ ...rest, name: rename(layerName), inputs: inputs.map((i) => ids.get(i) ?? i), callRange: site.range, ...(key ? { weightKey: key } : {}) }, probes.get(id), rename(layerName));
    ids.set(id, recorded.id);
  }
  const tensorOf = (id: string): TensorV => {
    const recorded = ids.get(id)!;
    return { k: 'tensor', id: recorded, shape: g.shapes.get(recorded), framework: 'pytorch' };
  };
  const last = at.path.split('.').pop()!;
  if (/^\d+$/.test(last)) return { k: 'tuple', items: [tensorOf(out.id)] };
  // The base model inside a head model (`self.mlm.bert(ids)`) returns its ModelOutput: the last hidden state, and the
  // pooler's output where it has one (BertForSequenceClassification's; BertForMaskedLM's bert has none).
  if (!at.own && at.path === hfBaseModelPath(at.root)) {
    const hidden = [...slice].reverse().find((l) => !l.name.startsWith(`${at.path}.pooler.`))!;
    const pooled = slice.find((l) => l.name.startsWith(`${at.path}.pooler.`)) ? out : undefined;
    return modelOutput(part.className, [['last_hidden_state', tensorOf(hidden.id)], ...(pooled ? [['pooler_output', tensorOf(pooled.id)] as [string, Value]] : [])]);
  }
  if (['encoder', 'decoder'].includes(last)) return modelOutput(part.className, [['last_hidden_state', tensorOf(out.id)]]);
  return tensorOf(out.id);
}

/** An encoder–decoder's encoder stack as the model holds it (`encoder`, BART's `model.encoder`: moduleLayouts.ts's stacks). */
function encoderStackPath(root: HfV): string | undefined {
  return hfModuleLayout(String(root.config.model_type))?.stacks ? joinModulePath(hfBaseModelPath(root), 'encoder') : undefined;
}

/** The weight key of the module a script tied a part's weight to: a transformers model's layer, or a torch module. */
function ownerKey(paths: ReadonlyMap<object, string>, owner: HfV | Value): string | undefined {
  if (owner.k === 'param') return paths.get(owner.owner);
  if (owner.k !== 'hf' || !owner.module) return undefined;
  const root = paths.get(owner.module.root);
  const layer = owner.module.path.replace(/\.(weight|bias)$/, '');
  return root ? `${root}.${layer}` : layer;
}

/** Calling a part a script's subclass of it holds (transformersBases.ts): its layers named under the subclass's path. */
export function callBuiltPart(interp: Interp, part: HfV, args: Value[], kwargs: Map<string, Value>, site: CallSite, path: string | undefined): Value {
  if (!interp.graph || interp.graph.framework !== 'pytorch' || !part.module) return UNKNOWN;
  return callHfPart(interp, part, part.module, args, kwargs, site, path);
}

function modelOutput(className: string, fields: Array<[string, Value]>): DictV {
  return { k: 'dict', map: new Map(fields.map(([field, v]) => [`s:${field}`, [str(field), v]])), attributes: true, modelOutput: className };
}

/** With get_peft_model's LoRA adapters (../peft/lora.ts), the fields following an adapted layer to its sum. */
function adapted(spec: HfModelSpec, lora: LoraSettings | undefined): HfModelSpec {
  if (!lora || !spec.outputFields) return spec;
  const withAdapters = withLoraAdapters(spec, lora);
  const fields = new Map([...spec.outputFields].map(([field, id]) => [field, adaptedOutput(withAdapters.layers, id)]));
  return { ...withAdapters, outputFields: fields };
}

/**
 * The tensors the call gives the graph's inputs: the first positionally (forward's first parameter is input_ids or
 * pixel_values in every catalogued model), the rest by keyword only, since forward's second positional parameter is
 * attention_mask, which the graph does not read. An encoder–decoder given labels and no decoder_input_ids decodes
 * its labels shifted right, one position (T5ForConditionalGeneration.forward's `self._shift_right(labels)`,
 * BartForConditionalGeneration's `shift_tokens_right(labels, …)`): the labels' shape, and an integer copy WAP does
 * not price.
 */
function fedInputs(spec: HfModelSpec, args: Value[], kwargs: Map<string, Value>): Map<string, TensorV> | { missing: string } {
  const fed = new Map<string, TensorV>();
  for (const [i, input] of spec.inputs.entries()) {
    const shiftedLabels = input.id === 'decoder_input_ids' && !kwargs.has('decoder_inputs_embeds') ? kwargs.get('labels') : undefined;
    const given = kwargs.get(input.id) ?? shiftedLabels ?? (i === 0 ? args[0] : undefined);
    if (given?.k !== 'tensor' || !given.id) return { missing: `\`${input.id}\`${kwargs.has('inputs_embeds') ? ' (it passes inputs_embeds, which WAP does not read)' : ''}` };
    fed.set(input.id, given);
  }
  return fed;
}

/**
 * The ModelOutput fields the call returns, in transformers' order: the loss first, and only when labels are passed
 * (the model computes it then; otherwise the field is None, which ModelOutput drops).
 */
function returnedFields(all: ReadonlyMap<string, string>, labelled: boolean): Map<string, string> {
  const loss = all.get('loss');
  const rest = [...all].filter(([field]) => field !== 'loss');
  return new Map(labelled && loss ? [['loss', loss], ...rest] : rest);
}

/**
 * Layers the model's forward runs whose result no other layer of the graph reads and no output field is: T5's
 * relative position bias, which forward adds to the scores (t5.ts draws it beside the attention), a router's weights,
 * a vision tower's post_layernorm. A call records them with the fields it returns; the loss, a field, only when it
 * runs (returnedFields).
 */
function sideComputations(spec: BuiltGraph): string[] {
  const read = new Set(spec.layers.flatMap((l) => l.inputs));
  const fields = new Set(spec.outputFields.values());
  return spec.layers.filter((l) => !read.has(l.id) && !fields.has(l.id)).map((l) => l.id);
}

/** The layers the wanted outputs are computed from, in graph order: the loss a call without labels never runs is left out. */
function feeding(layers: readonly LayerSpec[], wanted: readonly string[]): LayerSpec[] {
  const byId = new Map(layers.map((l) => [l.id, l]));
  const needed = new Set<string>();
  const stack = [...wanted];
  while (stack.length) {
    const id = stack.pop()!;
    if (needed.has(id)) continue;
    needed.add(id);
    stack.push(...(byId.get(id)?.inputs ?? []));
  }
  return layers.filter((l) => needed.has(l.id));
}

/**
 * Each kept layer's output shape with batch, as far as it is known: read at two token counts where the call's token
 * length is unknown (PROBE_LENGTHS). A reading that knows its input's size (specialise.ts) works them out again as
 * the layers are recorded.
 */
function probeShapes(spec: HfModelSpec, layers: readonly LayerSpec[], fed: ReadonlyMap<string, TensorV>): Map<string, Dims | undefined> {
  const readings = PROBE_LENGTHS.map((length) => shapesAt(spec.inputs, layers, fed, length));
  const out = new Map<string, Dims | undefined>();
  for (const layer of layers) {
    const [a, b] = readings.map((r) => r.get(layer.id));
    out.set(layer.id, a && b && a.length === b.length ? [undefined, ...a.map((d, i) => (d === b[i] ? d : undefined))] : undefined);
  }
  return out;
}

function shapesAt(inputs: readonly ModelInput[], layers: readonly LayerSpec[], fed: ReadonlyMap<string, TensorV>, length: number): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  for (const input of inputs) {
    const given = fed.get(input.id)?.shape?.slice(1);
    const known = given && given.length === (input.shape?.length ?? given.length) ? given : input.shape?.map((d) => (input.dtype === 'int' ? undefined : d));
    if (known) shapes.set(input.id, known.map((d) => d ?? length));
  }
  for (const layer of layers) {
    const ins = layer.inputs.map((i) => shapes.get(i));
    if (ins.some((s) => !s)) continue;
    const r = inferLayer(layer.op, ins as number[][], layer.attrs, { layout: 'channels_first', dtypeBytes: 4 });
    if (!isInferError(r)) shapes.set(layer.id, [...r.outputShape]);
  }
  return shapes;
}

/** A script's input fed to the model's token ids cannot be longer than its position table: the analysis warns past it. */
function noteTokenLimit(graphInputs: ModelInput[], tensor: TensorV, input: ModelInput): void {
  const own = graphInputs.find((i) => i.id === tensor.id);
  if (own && input.maxLength && !own.maxLength) own.maxLength = input.maxLength;
}

/**
 * A forward that takes only `**inputs` and hands them to the transformers model its module holds (Lightning's
 * fine-tuning example: `def forward(self, **inputs): return self.model(**inputs)`; the batch is the tokenizer's
 * dict): its inputs are that model's own, by name (input_ids, pixel_values). Undefined when the module holds none.
 */
export function keywordInputsOf(root: Value): string[] | undefined {
  if (root.k !== 'inst') return undefined;
  const held = [...root.attrs.values()].find((v): v is HfV => v.k === 'hf' && v.what === 'model');
  const inputs = held && hfGraph(held).inputs.map((i) => i.id);
  return inputs?.length ? inputs : undefined;
}
