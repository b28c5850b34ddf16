/**
 * Records the layers a model's evaluation produces, in call order (which is
 * topological: a node is recorded after the tensors it consumes exist).
 */
import type { Diagnostic, LayerSpec, ModelInput } from '../../core/ir';
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
  nameLeafOutput(from: number, outputId: string, name: string, type: string, range: LayerSpec['range']): string {
    if (outputId === name) return name;
    const own = this.layers.slice(from);
    const renameIn = (oldId: string, newId: string): void => {
      for (const l of own) {
        if (l.id === oldId) l.id = newId;
        l.inputs = l.inputs.map((i) => (i === oldId ? newId : i));
      }
    };
    const holder = own.find((l) => l.id === name);
    if (holder) {
      // The first functional op took the leaf's name (freshName); it moves aside.
      const moved = this.freshId(`${name}.${holder.type.split('.').pop()!.toLowerCase()}`);
      renameIn(name, moved);
      holder.name = moved;
      if (outputId === name) outputId = moved;
    }
    const out = own.find((l) => l.id === outputId);
    if (out) {
      this.ids.add(name);
      renameIn(outputId, name);
      out.name = name;
      return name;
    }
    this.add({ name, type, op: 'identity', attrs: {}, inputs: [outputId], range }, undefined, name);
    return name;
  }

  addInput(name: string, shape: Dims | undefined, framework: 'pytorch' | 'keras', known?: number[]): TensorV {
    const id = this.freshId(name);
    const input: ModelInput = { id };
    if (known) input.shape = known;
    this.inputs.push(input);
    return { k: 'tensor', id, shape, framework };
  }

  add(layer: Omit<LayerSpec, 'id'>, shape: Dims | undefined, idBase = layer.name): TensorV {
    const id = this.freshId(idBase);
    this.layers.push({ id, ...layer });
    return { k: 'tensor', id, shape, framework: this.framework };
  }
}
