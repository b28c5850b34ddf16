/**
 * GPT models as IR, built layer by layer the way the Python frontend reads
 * nanoGPT's model.py (embeddings, then blocks of LayerNorm → c_attn → split →
 * heads → causal SDPA → c_proj → residual add → LayerNorm → MLP → residual
 * add, then the final norm and the head), and analysed by the real core for
 * shapes and workloads. Used for GPT-3-scale and 1T-parameter planning.
 */
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeModel } from '../../src/core/analyze';
import { SpecBuilder } from '../core/specBuilder';

export interface GptShape {
  layers: number;
  hidden: number;
  heads: number;
  seq: number;
  vocab?: number;
  name?: string;
  /** Layers the code froze (LayerSpec.frozen), by name. */
  frozen?: (name: string) => boolean;
}

export function gptModel(g: GptShape): AnalyzedModel {
  const { layers, hidden: h, heads, seq } = g;
  const vocab = g.vocab ?? 51200;
  const b = new SpecBuilder(g.name ?? `gpt-${layers}x${h}`, 'pytorch', { inputShape: [seq], inputDtype: 'int' });
  const tok = b.add('transformer.wte', 'embedding', { numEmbeddings: vocab, embeddingDim: h }, { type: 'Embedding' });
  const pos = b.add('transformer.wpe', 'embedding', { numEmbeddings: seq, embeddingDim: h }, { type: 'Embedding', inputs: ['x'] });
  let x = b.add('add', 'add', {}, { inputs: [tok, pos] });
  for (let i = 0; i < layers; i++) {
    const p = `transformer.h.${i}`;
    const ln1 = b.add(`${p}.ln_1`, 'layernorm', { normalizedShape: [h], scale: true, center: true }, { inputs: [x] });
    const qkv = b.linear(`${p}.attn.c_attn`, h, 3 * h, true, { inputs: [ln1] });
    const parts = [0, 1, 2].map((k) => b.add(`${p}.attn.split${k}`, 'split', { axis: 2, index: k, sizes: [h, h, h] }, { inputs: [qkv] }));
    const heads3 = parts.map((s, k) => b.add(`${p}.attn.permute${k}`, 'permute', { dims: [0, 2, 1, 3] }, { inputs: [b.add(`${p}.attn.reshape${k}`, 'reshape', { shape: [-1, heads, h / heads] }, { inputs: [s] })] }));
    const att = b.add(`${p}.attn.sdpa`, 'sdpa', { causal: true }, { inputs: [heads3[0], heads3[1], heads3[2]] });
    const merged = b.add(`${p}.attn.reshape_out`, 'reshape', { shape: [-1, h] }, { inputs: [b.add(`${p}.attn.permute_out`, 'permute', { dims: [0, 2, 1, 3] }, { inputs: [att] })] });
    const proj = b.linear(`${p}.attn.c_proj`, h, h, true, { inputs: [merged] });
    x = b.add(`${p}.add_1`, 'add', {}, { inputs: [x, proj] });
    const ln2 = b.add(`${p}.ln_2`, 'layernorm', { normalizedShape: [h], scale: true, center: true }, { inputs: [x] });
    const fc = b.linear(`${p}.mlp.c_fc`, h, 4 * h, true, { inputs: [ln2] });
    const act = b.add(`${p}.mlp.gelu`, 'activation', { fn: 'gelu' }, { inputs: [fc] });
    const down = b.linear(`${p}.mlp.c_proj`, 4 * h, h, true, { inputs: [act] });
    x = b.add(`${p}.add_2`, 'add', {}, { inputs: [x, down] });
  }
  const lnf = b.add('transformer.ln_f', 'layernorm', { normalizedShape: [h], scale: true, center: true }, { inputs: [x] });
  b.linear('lm_head', h, vocab, false, { inputs: [lnf] });
  const spec = b.build();
  const frozen = g.frozen;
  return analyzeModel(frozen ? { ...spec, layers: spec.layers.map((l) => (frozen(l.name) ? { ...l, frozen: true } : l)) } : spec);
}
