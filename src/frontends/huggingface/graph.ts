/**
 * A small recorder for the layer graphs the Hugging Face architectures build:
 * each call adds one LayerSpec named as transformers names the module
 * (`model.layers.0.self_attn.q_proj`) and returns its id for the next layer's
 * inputs. Every layer points at the same source range (the call or file the
 * config came from): the modules live in transformers, not in the user's code.
 */
import type { Attrs, Diagnostic, LayerSpec, ModelInput, OpKind, PinnedDtype, SourceRange } from '../../core/ir';
import { mergeHeads, rotary } from './heads';

export class HfGraph {
  readonly layers: LayerSpec[] = [];
  readonly inputs: ModelInput[] = [];
  readonly diagnostics: Diagnostic[] = [];
  /**
   * transformers' ModelOutput fields in their order (last_hidden_state, pooler_output, logits, loss) → the layer
   * holding each: a script's module that calls the model reads the field it uses (../python/transformersCalls.ts).
   */
  readonly fields = new Map<string, string>();
  private readonly ids = new Set<string>();

  constructor(readonly range: SourceRange) {}

  /** Names `id` as the output field `name` and returns it. */
  field(name: string, id: string): string {
    this.fields.set(name, id);
    return id;
  }

  /** A model input with a shape (the registry marks it assumed when the config, not the user, chose it). */
  input(id: string, shape: number[], dtype: 'int' | 'float'): string {
    this.inputs.push({ id, shape, dtype });
    this.ids.add(id);
    return id;
  }

  add(name: string, type: string, op: OpKind, attrs: Attrs, inputs: string[], weightKey?: string, activationDtype?: PinnedDtype): string {
    let id = name;
    for (let i = 2; this.ids.has(id); i++) id = `${name}#${i}`;
    this.ids.add(id);
    this.layers.push({ id, name, type, op, attrs, inputs, range: this.range, ...(weightKey ? { weightKey } : {}), ...(activationDtype ? { activationDtype } : {}) });
    return id;
  }

  /**
   * The causal-LM loss a training step computes when it passes labels: transformers' ForCausalLMLoss upcasts the
   * logits to fp32 (`logits.float()`, loss/loss_utils.py) and takes cross_entropy, whose log_softmax keeps its fp32
   * result for the backward. Per token that is the vocabulary twice over in fp32, gigabytes per sequence for a
   * 128k vocabulary; the batch mean is outside the per-sample graph.
   */
  causalLmLoss(logits: string): string {
    const upcast = this.add('loss.float', 'Tensor.float', 'activation', { fn: 'cast', to: 'fp32' }, [logits], undefined, 'fp32');
    const logProbs = this.add('loss.log_softmax', 'F.cross_entropy', 'activation', { fn: 'log_softmax', axis: -1 }, [upcast], undefined, 'fp32');
    return this.field('loss', this.add('loss', 'F.cross_entropy', 'reduce', { fn: 'sum', allAxes: true, keepDims: false }, [logProbs], undefined, 'fp32'));
  }

  linear(name: string, inFeatures: number, outFeatures: number, bias: boolean, x: string, extra: Attrs = {}, weightKey?: string): string {
    return this.add(name, 'Linear', 'linear', { inFeatures, outFeatures, bias, ...extra }, [x], weightKey);
  }

  embedding(name: string, numEmbeddings: number, embeddingDim: number, x: string): string {
    return this.add(name, 'Embedding', 'embedding', { numEmbeddings, embeddingDim }, [x]);
  }

  /**
   * LayerNorm (weight and bias) or RMSNorm (weight only: `center: false`), over the last dim. nn.LayerNorm is one
   * native kernel; transformers' RMSNorms are Python modules that run their ops one by one on an fp32 copy
   * (`eagerFp32`, priced in planner/cost/eagerNorm.ts).
   */
  norm(name: string, size: number, kind: 'layernorm' | 'rmsnorm', x: string, type?: string, extra: Attrs = {}): string {
    const rms = kind === 'rmsnorm';
    return this.add(name, type ?? (rms ? 'RMSNorm' : 'LayerNorm'), 'layernorm', { normalizedShape: [size], scale: true, center: !rms, ...(rms ? { rms: true, eagerFp32: true } : {}), ...extra }, [x]);
  }

  act(name: string, fn: string, x: string, type?: string): string {
    return this.add(name, type ?? fn, 'activation', { fn: canonicalActivation(fn) }, [x]);
  }

  /**
   * nn.Dropout(p) in training. At p = 0 ATen returns its input (Dropout.cpp), so no node is added and the input
   * id comes back: configs that train without dropout (Llama's, ViT's defaults) keep no masks.
   */
  dropout(name: string, rate: number, x: string): string {
    return rate > 0 ? this.add(name, 'Dropout', 'dropout', { rate }, [x]) : x;
  }

  sum(name: string, inputs: string[]): string {
    return this.add(name, 'add', 'add', {}, inputs);
  }

  mul(name: string, inputs: string[]): string {
    return this.add(name, 'mul', 'mul', {}, inputs);
  }

  /**
   * The attention core between the projections: split into heads, softmax(QKᵀ/√d)·V,
   * merge heads. With grouped-query attention (kvHeads < heads) each key/value head
   * serves heads/kvHeads query heads, which is what transformers' `repeat_kv`
   * computes; here the query heads are laid out [kv, group, T, d] and keys/values
   * [kv, 1, T, d] so broadcasting gives the same products without the copy.
   * q: [T, heads·d]; k, v: [Tk, kvHeads·d]. Returns [T, heads·d]. `dropout` is the probability dropout on the
   * attention probabilities (transformers' attention_dropout / attn_pdrop / attention_probs_dropout_prob).
   * `qkNorm` adds the per-head RMSNorms `q_norm` / `k_norm` (a weight of head_dim each) on the viewed query and key
   * heads, before the transpose and the rotary embeddings, as modeling_qwen3.py applies them; `softcap` and `scale`
   * go to the sdpa node (Gemma 2's attn_logit_softcapping and query_pre_attn_scalar^-0.5, core/ops.ts SdpaAttrs).
   */
  attention(prefix: string, q: string, k: string, v: string, s: AttentionShape): string {
    const { heads, kvHeads, headDim: d } = s;
    const group = heads / kvHeads;
    // The token count stays -1 in the views so a user's --input sequence length flows through.
    const split = (x: string, role: string, n: number, g: number): string => {
      const viewed = this.add(`${prefix}.${role}_view`, 'view', 'reshape', { shape: group === 1 ? [-1, n, d] : [-1, n, g, d] }, [x]);
      const normed = s.qkNorm && role !== 'v' ? this.norm(`${prefix}.${role}_norm`, d, 'rmsnorm', viewed) : viewed;
      return this.add(`${prefix}.${role}_transpose`, 'transpose', 'permute', { dims: group === 1 ? [0, 2, 1, 3] : [0, 2, 3, 1, 4] }, [normed]);
    };
    // Rotary embeddings (modeling_llama.py, apply_rotary_pos_emb): x·cos + rotate_half(x)·sin on the split heads,
    // element-wise kernels with no parameters; rotate_half's negate-and-concat copy is counted in the sin product.
    const rotate = (x: string, role: string): string => (s.rotary ? rotary(this, `${prefix}.${role}`, x) : x);
    const qh = rotate(split(q, 'q', kvHeads, group), 'q');
    const kh = rotate(split(k, 'k', kvHeads, 1), 'k');
    const vh = split(v, 'v', kvHeads, 1);
    const scoring = { ...(s.softcap !== undefined ? { softcap: s.softcap } : {}), ...(s.scale !== undefined ? { scale: s.scale } : {}), ...(s.window !== undefined ? { window: s.window } : {}) };
    const attn = this.add(`${prefix}.sdpa`, 'scaled_dot_product_attention', 'sdpa', { causal: s.causal, heads, kvHeads, dropout: s.dropout, ...scoring }, [qh, kh, vh]);
    return mergeHeads(this, prefix, attn, { heads, kvHeads, headDim: d });
  }
}

/** What HfGraph.attention needs to know about the heads and the scores. */
export interface AttentionShape {
  heads: number;
  kvHeads: number;
  headDim: number;
  causal: boolean;
  dropout: number;
  rotary?: boolean;
  qkNorm?: boolean;
  softcap?: number;
  scale?: number;
  /** Keys each query attends back to, where the kernel the code runs skips the rest (slidingWindow.ts). */
  window?: number;
}

/** transformers' ACT2FN names → the catalogue's activation functions (the tanh approximation of GELU costs like GELU). */
export function canonicalActivation(name: string): string {
  const n = name.toLowerCase();
  if (n.startsWith('gelu')) return 'gelu';
  if (n === 'silu' || n === 'swish') return 'silu';
  if (n === 'relu' || n === 'tanh' || n === 'sigmoid' || n === 'relu6' || n === 'softmax' || n === 'leaky_relu' || n === 'elu') return n;
  return n;
}
