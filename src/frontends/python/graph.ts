/**
 * Records the layers a model's evaluation produces, in call order (which is
 * topological: a node is recorded after the tensors it consumes exist).
 */
import type { Diagnostic, LayerSpec, ModelInput } from '../../core/ir';
import { concreteShape } from './specialise';
import type { Dims, TensorV } from './values';

export class Graph {
  readonly layers: LayerSpec[] = [];
  readonly inputs: ModelInput[] = [];
  readonly diagnostics: Diagnostic[] = [];
  /** torch module object → its module path (`layer1.0.conv1`). */
  readonly paths = new Map<object, string>();
  /** Module path of the forward being evaluated, for naming functional ops inside it. */
  readonly scope: string[] = [];
  /** Paths of user modules without children (a custom LayerNorm): their first functional op takes the module's own name. */
  readonly leafPaths = new Set<string>();
  /** Per-object call counts: a module called twice gets `name#2`. */
  readonly calls = new Map<object, number>();
  /** Split outputs already recorded (`parts[0]` read twice is one node). */
  readonly memo = new Map<string, TensorV>();
  /** Output shape per recorded id (with batch). */
  readonly shapes = new Map<string, Dims | undefined>();
  /**
   * Set on a second reading for a known input (specialise.ts): each layer's output shape is
   * worked out as it is recorded, so forward code can read sizes from it.
   */
  concrete = false;
  /** A reading stalled on a size it did not know (a reshape or index by `x.size()` values). */
  starved = false;
  private readonly ids = new Set<string>();
  private readonly nameCounts = new Map<string, number>();

  constructor(readonly framework: 'pytorch' | 'keras') {}

  /** `base`, then `base_1`, `base_2` (torch.fx style) for functional ops. */
  freshName(base: string): string {
    const prefix = this.scope.length ? this.scope[this.scope.length - 1] : '';
    if (prefix && this.leafPaths.has(prefix) && !this.ids.has(prefix)) return prefix;
    const full = prefix ? `${prefix}.${base}` : base;
    const n = this.nameCounts.get(full) ?? 0;
    this.nameCounts.set(full, n + 1);
    return n === 0 ? full : `${full}_${n}`;
  }

  /** A unique id: the name, or `name#2`, `name#3` for later uses. */
  freshId(name: string): string {
    if (!this.ids.has(name)) {
      this.ids.add(name);
      return name;
    }
    for (let i = 2; ; i++) {
      const id = `${name}#${i}`;
      if (!this.ids.has(id)) {
        this.ids.add(id);
        return id;
      }
    }
  }

  /**
   * A user module without children (a custom LayerNorm2d, StochasticDepth) is
   * one leaf to torch: its output is the tensor its forward returns. That
   * tensor's layer takes the module's name (`from` is where the module's own
   * layers begin); a forward that returns its input unchanged gets an
   * identity layer of that name. Returns the id now holding the output.
   */
  nameLeafOutput(from: number, outputId: string, name: string, type: string, range: LayerSpec['range'], id = name): string {
    if (outputId === id) return id;
    const own = this.layers.slice(from);
    const renameIn = (oldId: string, newId: string): void => {
      if (this.shapes.has(oldId)) this.shapes.set(newId, this.shapes.get(oldId));
      for (const l of own) {
        if (l.id === oldId) l.id = newId;
        l.inputs = l.inputs.map((i) => (i === oldId ? newId : i));
      }
    };
    const holder = own.find((l) => l.id === id);
    if (holder) {
      // The first functional op took the leaf's name (freshName); it moves aside.
      const moved = this.freshId(`${name}.${holder.type.split('.').pop()!.toLowerCase()}`);
      renameIn(id, moved);
      holder.name = moved;
      if (outputId === id) outputId = moved;
    }
    const out = own.find((l) => l.id === outputId);
    if (out) {
      this.ids.add(id);
      renameIn(outputId, id);
      out.name = name;
      return id;
    }
    return this.add({ name, type, op: 'identity', attrs: {}, inputs: [outputId], range }, this.shapes.get(outputId), id).id;
  }

  addInput(name: string, shape: Dims | undefined, framework: 'pytorch' | 'keras', known?: number[]): TensorV {
    const id = this.freshId(name);
    const input: ModelInput = { id };
    if (known) input.shape = known;
    this.inputs.push(input);
    this.shapes.set(id, shape);
    return { k: 'tensor', id, shape, framework };
  }

  add(layer: Omit<LayerSpec, 'id'>, shape: Dims | undefined, idBase = layer.name): TensorV {
    const id = this.freshId(idBase);
    this.layers.push({ id, ...layer });
    const out = this.concrete ? concreteShape(this.shapes, layer, shape) : shape;
    this.shapes.set(id, out);
    return { k: 'tensor', id, shape: out, framework: this.framework };
  }
}
