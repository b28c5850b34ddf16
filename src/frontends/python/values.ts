/**
 * Values of the partial evaluator. Python values the model code computes with
 * (numbers, strings, lists, classes…), library stand-ins (torch.nn.Conv2d,
 * keras.layers.Dense), symbolic tensors, and Unknown for anything we cannot
 * know without running the code. Nothing here ever throws on Unknown.
 */
import type { LossKind } from './losses';
import type { AttrValue, Attrs, OpKind, SourceRange } from '../../core/ir';
import type { PyNode } from './ast';
import type { Graph } from './graph';
import type { ModuleV } from './modules';
import type { HydraMain } from './hydraRuntime';

export type Value =
  | { k: 'none' }
  | { k: 'bool'; v: boolean }
  | { k: 'num'; v: number; float: boolean }
  | { k: 'str'; v: string }
  | { k: 'list'; items: Value[] }
  | { k: 'tuple'; items: Value[] }
  | DictV
  | { k: 'range'; start: number; stop: number; step: number }
  | FuncV
  | ClassV
  | InstV
  | { k: 'bound'; self: Value; fn: FuncV | NativeV }
  | NativeV
  | { k: 'lib'; path: string }
  | TensorV
  | ModV
  | SplitV
  /** An nn.Parameter, or a module's own parameter (`name`: `weight`, `bias`, `in_proj_weight`), whose layers the owner's `frozen` mark reaches. */
  | { k: 'param'; owner: ModV | InstV; shape?: Dims; name?: string }
  | KLayerV
  | KModelV
  | HfV
  | ModuleV
  /** The batch size times a factor (`x.shape[0]`, `B * num_windows`): batchFolding.ts. */
  | { k: 'batch'; factor: number }
  | { k: 'unknown'; why?: string };

export type Dims = Array<number | undefined>;

export interface DictV {
  k: 'dict';
  map: Map<string, [Value, Value]>;
  /** An OmegaConf DictConfig (OmegaConf.load, a Hydra config): its keys read as attributes too (`cfg.model.n_layer`). */
  attributes?: true;
  /** transformers' ModelOutput, of the named model class: its fields read as attributes and by position too (`outputs[0]`). */
  modelOutput?: string;
}

export interface Scope {
  vars: Map<string, Value>;
  parent?: Scope;
  /** Names declared `global`/`nonlocal` resolve in the parent chain on assignment. */
  outer?: Set<string>;
}

export interface FuncV {
  k: 'func';
  name: string;
  node: PyNode;
  closure: Scope;
  defaults: Map<string, Value>;
  kind: 'method' | 'static' | 'class' | 'property';
  /** `@hydra.main(…)`: Hydra passes the composed config as the first argument (hydraRuntime.ts). */
  hydraMain?: HydraMain;
  /** `@torch.no_grad()` or `@torch.inference_mode()`: an evaluation pass, skipped inside a training loop (evaluationPasses.ts). */
  withoutGradients?: string;
}

export interface ClassV {
  k: 'class';
  name: string;
  bases: Value[];
  attrs: Map<string, Value>;
  node: PyNode;
  dataclass: boolean;
  fields: Array<{ name: string; default?: Value }>;
}

export interface InstV {
  k: 'inst';
  cls: ClassV;
  attrs: Map<string, Value>;
  /** Registered child modules in registration order (torch nn.Module subclasses). */
  children?: Map<string, Value>;
  /** Subclasses of nn.Sequential, nn.ModuleList or nn.ModuleDict iterate as their container does (`for m in self`). */
  container?: 'sequential' | 'list' | 'dict';
  range?: SourceRange;
  /**
   * The input shape (without batch): Keras subclassed models' from `model.build(…)` or a first call on a shaped
   * tensor; torch modules' from the first call a script makes on a constant (`model(torch.randn(8, 3, 32, 32))`).
   */
  inputShape?: Dims;
  /** Where a torch module's `inputShape` came from, for the message that says so. */
  inputShapeFrom?: string;
  /** The code froze its parameters (`requires_grad_(False)`; frozenParameters.ts): its layers record `frozen`. */
  frozen?: boolean;
}

export type NativeFn = (args: Value[], kwargs: Map<string, Value>, call: CallSite) => Value;

export interface NativeV {
  k: 'native';
  name: string;
  fn: NativeFn;
}

/** Where a call happens: used for ranges and for naming functional nodes. */
export interface CallSite {
  node: PyNode;
  range: SourceRange;
  /** The callee as written, e.g. `F.relu`, `torch.cat`. */
  calleeText: string;
}

export interface TensorV {
  k: 'tensor';
  /** Producer id (layer or model input); '' for constants (torch.ones(…)) that are not graph nodes. */
  id: string;
  /** Including batch; undefined when even the rank is unknown. */
  shape?: Dims;
  framework: 'pytorch' | 'keras';
  /**
   * Set on an nn.Parameter read in forward: functional ops that take it as their weight
   * (F.linear, F.layer_norm) and `.shape` see the parameter itself, not its graph node.
   */
  param?: Extract<Value, { k: 'param' }>;
  /** Torch dim 0 is the batch times this (windows folded into it); the IR shape is [batch, fold, …]. */
  fold?: number;
  /** With `fold`: torch axis 0 is IR axis 2 and torch axis 1 the folded batch (after `qkv.permute(2, 0, …)`). */
  front?: boolean;
  /** Computed from a constant (a buffer fed to a module): its batch dim is a literal 1, not the model's batch. */
  batchOne?: boolean;
  /** No batch dim: a parameter's own dims behind a placeholder 1 (reshape and permute then address every dim). */
  unbatched?: boolean;
  /** A constant whose values are known (numericArrays.ts): `torch.arange(n) * w`, a relative position index. */
  values?: import('./numericArrays').ArrayData;
  /** A step of an RMSNorm written as eager ops (rmsNormIdiom.ts), until the norm is recognized. */
  rms?: import('./rmsNormIdiom').RmsStep;
  /** `torch.arange(T)` over the first input's sequence: an embedding of it is a position table, whose size bounds T. */
  positions?: boolean;
  /** The dtype an explicit cast gave it (`.float()`: an fp32 copy, whatever the training precision); absent: the plan's. */
  dtype?: import('../../core/ir').PinnedDtype;
  /** Made by a cast (casts.ts): the tensor it converted, which an eager RMSNorm's own upcast takes back in. */
  castOf?: TensorV;
  /** The labels a training step passes to forward (trainingLabels.ts): data, never a layer, whatever is done to it. */
  labels?: boolean;
}

/** A library module instance: nn.Conv2d(…) or a container (Sequential, ModuleList, ModuleDict). */
export interface ModV {
  k: 'mod';
  type: string;
  op: OpKind;
  attrs: Attrs;
  range: SourceRange;
  children?: Map<string, Value>;
  container?: 'sequential' | 'list' | 'dict';
  /** Weight tying: this module's weight is another module's (self.lm_head.weight = self.wte.weight). */
  tiedTo?: ModV | InstV;
  warning?: string;
  /** Why a size the constructor was given is unknown (`nn.Embedding(vocab, args.n_embd)` with `--n_embd $EMBD`). */
  sizeUnknown?: string;
  /** Library modules made of other modules (torchComposites.ts): their forward is built in. */
  composite?: 'transformer_encoder_layer' | 'transformer_encoder' | 'transformer_decoder_layer' | 'transformer_decoder' | 'transformer';
  /** A loss module (losses.ts): called, it records the kernels the loss runs on the prediction. */
  loss?: LossKind;
  /** The code froze its parameters (`requires_grad_(False)`; frozenParameters.ts): its layers record `frozen`. */
  frozen?: boolean;
  /** A container model's input from a script's first call on a constant, as InstV.inputShape (an nn.Sequential model). */
  inputShape?: Dims;
  inputShapeFrom?: string;
}

export interface SplitV {
  k: 'splitres';
  src: TensorV;
  axis: number;
  size?: number;
  sections?: number[];
  chunks?: number;
  site: CallSite;
}

export interface KLayerV {
  k: 'klayer';
  type: string;
  op: OpKind;
  attrs: Attrs;
  name: string;
  range: SourceRange;
  calls: number;
  warning?: string;
  inputShape?: Dims;
}

export interface KModelV {
  k: 'kmodel';
  name: string;
  kind: 'functional' | 'sequential';
  inputs: TensorV[];
  outputs: TensorV[];
  /** Sequential: the layers in order (built lazily into a chain). */
  layers: KLayerV[];
  inputShape?: Dims;
  range: SourceRange;
  /** The recorder its layers were called in (functional models). */
  graph?: Graph;
}

/** A Hugging Face config or model (transformersRuntime.ts): only its config is kept; ../huggingface builds the graph. */
export interface HfV {
  k: 'hf';
  /** A submodule (`model.bert`) or one of its parameters (`….weight`) is a path into the model's graph (transformersModules.ts). */
  what: 'config' | 'model' | 'module' | 'parameter';
  module?: {
    root: HfV;
    path: string;
    /** Built by its own class (`BertLayer(config)`, transformersParts.ts): its layers are named from it, not from a model. */
    own?: true;
  };
  config: Record<string, AttrValue>;
  /** The class as written: LlamaConfig, AutoConfig, LlamaForCausalLM, AutoModelForCausalLM. */
  className: string;
  head?: import('../huggingface/configs').HfHead;
  encoderOnly?: boolean;
  /** Where the config came from, in words or as a path. */
  source: string;
  range: SourceRange;
  /** What the loading call says about the model that its config does not (quantization WAP cannot read): carried by the model's spec. */
  loadNotes?: import('../../core/ir').Diagnostic[];
  /** Loaded in 4 or 8 bits through bitsandbytes (quantizationCalls.ts). */
  quantization?: import('../quantization/bitsandbytes').BitsAndBytesSettings;
}

export const NONE: Value = { k: 'none' };
export const UNKNOWN: Value = { k: 'unknown' };
export const TRUE: Value = { k: 'bool', v: true };
export const FALSE: Value = { k: 'bool', v: false };

export const num = (v: number, float = !Number.isInteger(v)): Value => ({ k: 'num', v, float });
export const int = (v: number): Value => ({ k: 'num', v, float: false });
export const str = (v: string): Value => ({ k: 'str', v });
export const bool = (v: boolean): Value => (v ? TRUE : FALSE);
export const tuple = (items: Value[]): Value => ({ k: 'tuple', items });
export const list = (items: Value[]): Value => ({ k: 'list', items });
export const native = (name: string, fn: NativeFn): NativeV => ({ k: 'native', name, fn });

export function dictOf(entries: Array<[string, Value]>): DictV {
  const map = new Map<string, [Value, Value]>();
  for (const [key, value] of entries) map.set(keyOf(str(key)), [str(key), value]);
  return { k: 'dict', map };
}

let objectIds = 0;
const objectKeys = new WeakMap<object, string>();

/** Dict key identity: value equality for scalars, object identity otherwise. */
export function keyOf(v: Value): string {
  switch (v.k) {
    case 'str':
      return 's:' + v.v;
    case 'num':
      return 'n:' + v.v;
    case 'bool':
      return 'n:' + (v.v ? 1 : 0);
    case 'none':
      return 'N';
    case 'tuple':
      return 't:(' + v.items.map(keyOf).join(',') + ')';
    default: {
      let key = objectKeys.get(v);
      if (!key) objectKeys.set(v, (key = 'o:' + ++objectIds));
      return key;
    }
  }
}

/** A positive whole number (a batch, a count of steps or processes), or undefined for anything else. */
export const positiveWhole = (v: Value | undefined): number | undefined => (v?.k === 'num' && !v.float && v.v >= 1 ? v.v : undefined);

export function isNum(v: Value): v is { k: 'num'; v: number; float: boolean } {
  return v.k === 'num';
}

/** Python number value of ints, floats and bools; undefined otherwise. */
export function toNumber(v: Value | undefined): number | undefined {
  if (!v) return undefined;
  if (v.k === 'num') return v.v;
  if (v.k === 'bool') return v.v ? 1 : 0;
  return undefined;
}

export function toStr(v: Value | undefined): string | undefined {
  return v?.k === 'str' ? v.v : undefined;
}

/** Truthiness; undefined when it cannot be known. */
export function truthy(v: Value): boolean | undefined {
  switch (v.k) {
    case 'none':
      return false;
    case 'bool':
      return v.v;
    case 'num':
      return v.v !== 0;
    case 'str':
      return v.v.length > 0;
    case 'list':
    case 'tuple':
      return v.items.length > 0;
    case 'dict':
      return v.map.size > 0;
    case 'range':
      return rangeItems(v).length > 0;
    case 'unknown':
    case 'tensor':
    case 'splitres':
      return undefined;
    default:
      return true;
  }
}

export function rangeItems(r: { start: number; stop: number; step: number }, cap = 100_000): number[] {
  const out: number[] = [];
  if (r.step === 0) return out;
  for (let i = r.start; r.step > 0 ? i < r.stop : i > r.stop; i += r.step) {
    out.push(i);
    if (out.length >= cap) break;
  }
  return out;
}

/**
 * `dict(x)`'s entries with string keys: a dict, or an iterable of (key, value) pairs, as nn.ModuleDict takes
 * (torch/nn/modules/container.py, ModuleDict.update). Undefined when any entry is not a known pair.
 */
export function namedEntries(v: Value | undefined): Array<[string, Value]> | undefined {
  if (!v) return undefined;
  if (v.k === 'dict') return [...v.map.values()].every(([k]) => k.k === 'str') ? [...v.map.values()].map(([k, x]) => [(k as { v: string }).v, x]) : undefined;
  const out: Array<[string, Value]> = [];
  for (const pair of iterItems(v) ?? [UNKNOWN]) {
    const kv = iterItems(pair);
    if (kv?.length !== 2 || kv[0].k !== 'str') return undefined;
    out.push([kv[0].v, kv[1]]);
  }
  return out;
}

/** Items of an iterable value; undefined when not iterable or unknown. */
export function iterItems(v: Value): Value[] | undefined {
  switch (v.k) {
    case 'list':
    case 'tuple':
      return v.items;
    case 'range':
      return rangeItems(v).map(int);
    case 'str':
      return [...v.v].map(str);
    case 'dict':
      return [...v.map.values()].map(([key]) => key);
    case 'mod':
    case 'inst':
      return v.children && v.container ? (v.container === 'dict' ? [...v.children.keys()].map(str) : [...v.children.values()]) : undefined;
    default:
      return undefined;
  }
}

export function typeName(v: Value): string {
  switch (v.k) {
    case 'num':
      return v.float ? 'float' : 'int';
    case 'inst':
      return v.cls.name;
    case 'mod':
      return v.type;
    case 'klayer':
      return v.type;
    default:
      return v.k;
  }
}
