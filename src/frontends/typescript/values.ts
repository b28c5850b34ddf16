/**
 * The values the TF.js script evaluator computes with. Plain data (numbers,
 * strings, arrays, objects) are ordinary JS values; everything TF.js-shaped is
 * one of the classes below. Nothing here runs user code: function values are
 * syntax plus a closure environment, interpreted by ./evaluator.
 */
import type * as ts from 'typescript';
import type { SourceRange } from '../../core/ir';

/** A value the evaluator could not compute (a parameter, an API it does not model, `new Foo()`). */
export class Unknown {
  constructor(
    readonly node: ts.Node | undefined,
    readonly why: string,
  ) {}
}

/** `tf`, `tf.layers`, `tf.layers.conv2d`: a path into the TF.js API. */
export class TfPath {
  constructor(readonly path: readonly string[]) {}
  child(name: string): TfPath {
    return new TfPath([...this.path, name]);
  }
}

/** A layer object made by `tf.layers.<factory>(config)`, not yet applied. */
export class LayerRef {
  /** How many times `.apply` has been called on it: the second use is `name#2` and shares weights. */
  applications = 0;
  constructor(
    readonly factory: string,
    /** Keras class name ('Conv2D'); the factory name when TF.js has no such factory. */
    readonly className: string,
    readonly known: boolean,
    readonly config: Record<string, unknown>,
    readonly name: string,
    readonly range: SourceRange,
  ) {}
}

/** Where a symbolic tensor comes from: a model input or one application of a layer. */
export interface InputNode {
  kind: 'input';
  id: string;
  shape?: Array<number | null>;
  dtype?: string;
  range: SourceRange;
}

export interface ApplyNode {
  kind: 'apply';
  id: string;
  layer: LayerRef;
  /** Producer tensors in argument order; Unknown when an argument could not be traced. */
  inputs: Array<TensorRef | Unknown>;
  callRange: SourceRange;
  /** Creation order: producers are always created before consumers. */
  seq: number;
}

export class TensorRef {
  constructor(readonly node: InputNode | ApplyNode) {}
}

/** A `tf.sequential(...)` or `tf.model(...)` found while evaluating. */
export class ModelRef {
  name: string | undefined;
  /** 'function' names (the factory that returns the model) win over variable names. */
  nameFrom: 'variable' | 'function' | undefined;
  /** Sequential: layers in order; elements that could not be evaluated stay Unknown. */
  readonly layers: Array<LayerRef | ModelRef | Unknown> = [];
  inputs: Array<TensorRef | Unknown> = [];
  outputs: Array<TensorRef | Unknown> = [];
  constructor(
    readonly kind: 'sequential' | 'functional',
    readonly range: SourceRange,
    /** The function call frame that created it (0 = top level). */
    readonly frame: number,
  ) {}
}

/** A function, arrow function or method, with the environment it closes over. */
export class FuncRef {
  invoked = false;
  constructor(
    readonly node: ts.FunctionLikeDeclaration,
    readonly env: Env,
    public name: string | undefined,
    /** For class methods: the one instance object that `this` stands for. */
    readonly self?: Record<string, Value>,
  ) {}
}

export type Value = unknown;

/** Lexical scope. Lookups walk outward; unknown names are Unknown. */
export class Env {
  private readonly vars = new Map<string, Value>();
  constructor(readonly parent?: Env) {}

  declare(name: string, value: Value): void {
    this.vars.set(name, value);
  }

  has(name: string): boolean {
    return this.vars.has(name) || (this.parent?.has(name) ?? false);
  }

  lookup(name: string): Value {
    for (let env: Env | undefined = this; env; env = env.parent) {
      if (env.vars.has(name)) return env.vars.get(name);
    }
    return undefined;
  }

  /** Assigns to the nearest declaration, or declares here when there is none. */
  assign(name: string, value: Value): void {
    for (let env: Env | undefined = this; env; env = env.parent) {
      if (env.vars.has(name)) {
        env.vars.set(name, value);
        return;
      }
    }
    this.vars.set(name, value);
  }
}

/** Plain data for a layer config: Unknown entries vanish, layer objects become {className, config}. */
export function toPlain(value: Value, depth = 0): unknown {
  if (depth > 8) return undefined;
  if (value instanceof Unknown || value instanceof FuncRef || value instanceof TfPath || value instanceof TensorRef || value instanceof ModelRef) return undefined;
  if (value instanceof LayerRef) return { className: value.className, config: value.config };
  if (Array.isArray(value)) return value.map((v) => toPlain(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const p = toPlain(v, depth + 1);
      if (p !== undefined) out[k] = p;
    }
    return out;
  }
  return value;
}

/**
 * TF.js's own automatic layer name: `toSnakeCase(className) + '_' + className + n`,
 * n counting per class from 1 across everything constructed in the process
 * (tfjs-layers' Layer constructor with getUid(prefix)). E.g. the first
 * unnamed tf.layers.conv2d is 'conv2d_Conv2D1', the second 'conv2d_Conv2D2',
 * the first batchNormalization 'batch_normalization_BatchNormalization1'.
 */
export function tfjsSnakeCase(className: string): string {
  const intermediate = className.replace(/(.)([A-Z][a-z0-9]+)/g, '$1_$2');
  const snake = intermediate.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
  return snake.startsWith('_') ? `private${snake}` : snake;
}

export class NameCounter {
  private readonly counts = new Map<string, number>();
  next(prefix: string): number {
    const n = (this.counts.get(prefix) ?? 0) + 1;
    this.counts.set(prefix, n);
    return n;
  }
  layerName(className: string): string {
    return `${tfjsSnakeCase(className)}_${className}${this.next(className)}`;
  }
  /** tf.input() without a name: 'input' + getUid('input'), i.e. 'input1'. */
  inputName(): string {
    return `input${this.next('input')}`;
  }
}
