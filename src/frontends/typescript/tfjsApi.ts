/**
 * The slice of the TF.js API the evaluator models: imports of
 * '@tensorflow/tfjs*', `tf.layers.<factory>(config)`, `tf.sequential`,
 * `tf.input`, `tf.model`, `layer.apply(x)`, `model.add(layer)`, plus a few
 * pure builtins (Math.*, Array.from) that model code uses for sizes.
 */
import * as ts from 'typescript';
import type { SourceRange } from '../../core/ir';
import { TFJS_FACTORY_CLASSES } from '../json/kerasLayers';
import type { Evaluator } from './evaluator';
import { isRecord } from './operators';
import { Env, FuncRef, LayerRef, ModelRef, NameCounter, TensorRef, TfPath, Unknown, toPlain, type ApplyNode, type Value } from './values';

export function rangeOf(node: ts.Node, sf: ts.SourceFile): SourceRange {
  const start = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  const end = sf.getLineAndCharacterOfPosition(node.end);
  return { line: start.line + 1, column: start.character + 1, endLine: end.line + 1, endColumn: end.character + 1 };
}

function isTfjsModule(spec: unknown): boolean {
  return typeof spec === 'string' && spec.startsWith('@tensorflow/tfjs');
}

export class TfjsApi {
  readonly models: ModelRef[] = [];
  readonly names = new NameCounter();
  private seq = 0;
  /** Set by the evaluator so that models know which call frame made them. */
  frameOf: () => number = () => 0;

  constructor(private readonly sf: ts.SourceFile) {}

  bindImport(decl: ts.ImportDeclaration, env: Env): void {
    if (!ts.isStringLiteral(decl.moduleSpecifier) || !isTfjsModule(decl.moduleSpecifier.text)) return;
    const clause = decl.importClause;
    if (!clause) return;
    if (clause.name) env.declare(clause.name.text, new TfPath([]));
    const bindings = clause.namedBindings;
    if (!bindings) return;
    if (ts.isNamespaceImport(bindings)) env.declare(bindings.name.text, new TfPath([]));
    else for (const el of bindings.elements) env.declare(el.name.text, new TfPath([(el.propertyName ?? el.name).text]));
  }

  require(spec: Value, call: ts.CallExpression): Value {
    return isTfjsModule(spec) ? new TfPath([]) : new Unknown(call, 'require of another module');
  }

  call(fn: TfPath, args: Value[], call: ts.CallExpression, ev: Evaluator): Value {
    const [head, name, ...rest] = fn.path;
    if (head?.startsWith('$')) return builtin(head, name, args, call, ev);
    if (head === 'layers' && name !== undefined && rest.length === 0) return this.layer(name, args[0], call);
    if (name === undefined) {
      if (head === 'sequential') return this.sequential(args[0], call);
      if (head === 'model') return this.functional(args[0], call);
      if (head === 'input') return this.input(args[0], call);
    }
    return new Unknown(call, `tf.${fn.path.join('.')}()`);
  }

  callOn(self: LayerRef | ModelRef, method: string, args: Value[], call: ts.CallExpression): Value {
    if (self instanceof LayerRef) {
      if (method === 'apply') return this.apply(self, args[0], call);
      return new Unknown(call, `layer .${method}()`);
    }
    if (method === 'add') {
      const arg = args[0];
      self.layers.push(arg instanceof LayerRef || arg instanceof ModelRef ? arg : unknownAt(arg, call.arguments[0] ?? call));
      return undefined;
    }
    if (method === 'apply' && self.kind === 'sequential') {
      let t: Value = args[0];
      for (const l of self.layers) {
        if (l instanceof Unknown) return l;
        t = this.callOn(l, 'apply', [t], call);
      }
      return t;
    }
    return new Unknown(call, `model .${method}()`);
  }

  private layer(factory: string, arg: Value, call: ts.CallExpression): LayerRef {
    const config = (isRecord(arg) ? toPlain(arg) : {}) as Record<string, unknown>;
    const mapped = TFJS_FACTORY_CLASSES[factory];
    const className = mapped ?? factory.charAt(0).toUpperCase() + factory.slice(1);
    let name: string;
    if (typeof config.name === 'string' && config.name) name = config.name;
    else if (className === 'InputLayer') name = this.names.inputName();
    else name = this.names.layerName(className);
    return new LayerRef(factory, className, mapped !== undefined, config, name, rangeOf(call, this.sf));
  }

  private sequential(arg: Value, call: ts.CallExpression): ModelRef {
    const model = new ModelRef('sequential', rangeOf(call, this.sf), this.frameOf());
    const list = isRecord(arg) ? arg.layers : undefined;
    if (Array.isArray(list)) {
      const nodes = layerElementNodes(call);
      list.forEach((v, i) => {
        model.layers.push(v instanceof LayerRef || v instanceof ModelRef ? v : unknownAt(v, nodes?.[i] ?? call));
      });
    } else if (list !== undefined) {
      model.layers.push(unknownAt(list, call));
    }
    this.models.push(model);
    return model;
  }

  private functional(arg: Value, call: ts.CallExpression): ModelRef {
    const model = new ModelRef('functional', rangeOf(call, this.sf), this.frameOf());
    if (isRecord(arg)) {
      model.inputs = tensors(arg.inputs, call);
      model.outputs = tensors(arg.outputs, call);
    }
    this.models.push(model);
    return model;
  }

  private input(arg: Value, call: ts.CallExpression): TensorRef {
    const cfg = (isRecord(arg) ? toPlain(arg) : {}) as Record<string, unknown>;
    const name = typeof cfg.name === 'string' && cfg.name ? cfg.name : this.names.inputName();
    const shape = shapeOf(cfg.shape) ?? shapeOf(cfg.batchShape)?.slice(1);
    return new TensorRef({ kind: 'input', id: name, shape, dtype: typeof cfg.dtype === 'string' ? cfg.dtype : undefined, range: rangeOf(call, this.sf) });
  }

  private apply(layer: LayerRef, arg: Value, call: ts.CallExpression): TensorRef {
    layer.applications += 1;
    const id = layer.applications === 1 ? layer.name : `${layer.name}#${layer.applications}`;
    const node: ApplyNode = { kind: 'apply', id, layer, inputs: tensors(arg, call), callRange: rangeOf(call, this.sf), seq: ++this.seq };
    return new TensorRef(node);
  }
}

/** The syntax nodes of `layers: [a, b, c]` in `tf.sequential({layers: [...]})`, for positions. */
function layerElementNodes(call: ts.CallExpression): readonly ts.Expression[] | undefined {
  const arg = call.arguments[0];
  if (!arg || !ts.isObjectLiteralExpression(arg)) return undefined;
  for (const p of arg.properties) {
    if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'layers' && ts.isArrayLiteralExpression(p.initializer)) {
      return p.initializer.elements;
    }
  }
  return undefined;
}

function unknownAt(v: Value, node: ts.Node): Unknown {
  return v instanceof Unknown ? v : new Unknown(node, 'not a layer');
}

function tensors(v: Value, call: ts.CallExpression): Array<TensorRef | Unknown> {
  const list = Array.isArray(v) ? v : [v];
  return list.map((t) => (t instanceof TensorRef ? t : unknownAt(t, call)));
}

/** [28, 28, 1] or [null, 100] (variable length kept as null); undefined when not a list of sizes. */
export function shapeOf(v: unknown): Array<number | null> | undefined {
  if (!Array.isArray(v)) return undefined;
  if (!v.every((d) => d === null || (typeof d === 'number' && Number.isInteger(d)))) return undefined;
  return v as Array<number | null>;
}

function builtin(head: string, name: string | undefined, args: Value[], call: ts.CallExpression, ev: Evaluator): Value {
  const nums = args.every((a) => typeof a === 'number') ? (args as number[]) : undefined;
  if (head === '$Math' && nums) {
    switch (name) {
      case 'floor':
      case 'ceil':
      case 'round':
      case 'sqrt':
      case 'abs':
      case 'trunc':
      case 'log2':
        return Math[name](nums[0]);
      case 'max':
        return Math.max(...nums);
      case 'min':
        return Math.min(...nums);
      case 'pow':
        return Math.pow(nums[0], nums[1]);
      default:
        break;
    }
  }
  if (head === '$Array' && name === 'from' && isRecord(args[0]) && typeof args[0].length === 'number') {
    const n = Math.min(args[0].length, 10_000);
    const fn = args[1] instanceof FuncRef ? args[1] : undefined;
    return Array.from({ length: n }, (_, i) => (fn ? ev.callFunction(fn, [undefined, i], undefined) : undefined));
  }
  if (head === '$Array' && name === 'isArray') return Array.isArray(args[0]);
  return new Unknown(call, `${head.slice(1)}.${name ?? ''}()`);
}
