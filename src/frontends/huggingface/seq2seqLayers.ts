/**
 * The encoder–decoder layers BART (modeling_bart.py), mBART (modeling_mbart.py) and Whisper (modeling_whisper.py)
 * share. transformers copies them from one another (modeling_whisper.py's WhisperEncoderLayer is "Copied from
 * transformers.models.mbart.modeling_mbart.MBartEncoderLayer"), so one builder serves the three:
 *   self_attn.{q,k,v,out}_proj, self_attn_layer_norm,
 *   [decoder: encoder_attn.{q,k,v,out}_proj on the encoder's output, encoder_attn_layer_norm,]
 *   fc1 → activation_fn → fc2, final_layer_norm
 * with a bias on every projection except Whisper's k_proj (WhisperAttention: "no bias in the k_proj in original
 * code"), LayerNorms with weight and bias, and the dropouts where the modeling files apply them: `dropout` on each
 * sublayer's output and on the embeddings, `activation_dropout` after the activation, `attention_dropout` on the
 * attention probabilities. BART normalizes after each residual add (post-LN); mBART and Whisper normalize each
 * sublayer's input (pre-LN) and close each stack with a LayerNorm.
 *
 * T5 (t5.ts), the catalogue's other encoder–decoder, shares none of this: RMS norms, no biases, a relative position
 * bias and `block.N.layer.M` names. What the two have in common is the decoder's input, sized the same way
 * (decoder_input_ids at the configured length).
 */
import { diagnosticAt } from '../../core/ir';
import { intField, rateField, strField, type HfConfig } from './configs';
import type { HfGraph } from './graph';

/** What every layer of both stacks reads from the config. */
export interface Seq2SeqDims {
  model: number;
  /** LayerNorm on each sublayer's input (mBART, Whisper) rather than after its residual add (BART). */
  preNorm: boolean;
  /** Whether k_proj has a bias (BartAttention's does; WhisperAttention's does not). */
  keyBias: boolean;
  act: string;
  dropout: number;
  attentionDropout: number;
  activationDropout: number;
}

/** One stack's depth and widths: encoder_layers, encoder_attention_heads, encoder_ffn_dim (decoder_… alike). */
export interface StackDims {
  layers: number;
  heads: number;
  ffn: number;
}

export function seq2seqDims(config: HfConfig, layout: { preNorm: boolean; keyBias: boolean }): Seq2SeqDims {
  return {
    model: intField(config, 'd_model'),
    ...layout,
    act: strField(config, 'activation_function', 'gelu'),
    dropout: rateField(config, 'dropout'),
    attentionDropout: rateField(config, 'attention_dropout'),
    activationDropout: rateField(config, 'activation_dropout'),
  };
}

export function stackDims(config: HfConfig, side: 'encoder' | 'decoder', model: number): StackDims {
  const heads = intField(config, `${side}_attention_heads`);
  if (heads === 0 || model % heads !== 0) throw new Error(`d_model ${model} is not divisible by ${side}_attention_heads ${heads}`);
  return { layers: intField(config, `${side}_layers`), heads, ffn: intField(config, `${side}_ffn_dim`) };
}

/** q_proj on `x`, k_proj and v_proj on `kv` (the layer's own input, or the encoder's output in encoder_attn), out_proj. */
function attention(g: HfGraph, prefix: string, x: string, kv: string, d: Seq2SeqDims, heads: number, causal: boolean): string {
  const q = g.linear(`${prefix}.q_proj`, d.model, d.model, true, x);
  const k = g.linear(`${prefix}.k_proj`, d.model, d.model, d.keyBias, kv);
  const v = g.linear(`${prefix}.v_proj`, d.model, d.model, true, kv);
  const a = g.attention(prefix, q, k, v, { heads, kvHeads: heads, headDim: d.model / heads, causal, dropout: d.attentionDropout });
  return g.linear(`${prefix}.out_proj`, d.model, d.model, true, a);
}

/**
 * One residual sublayer: pre-LN `x + dropout(f(norm(x)))`, post-LN `norm(x + dropout(f(x)))`, the norm named as the
 * layer names it (self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm).
 */
function sublayer(g: HfGraph, p: string, name: string, norm: string, h: string, d: Seq2SeqDims, f: (x: string) => string): string {
  if (d.preNorm) return g.sum(`${p}.${name}_residual`, [h, g.dropout(`${p}.${name}_dropout`, d.dropout, f(g.norm(`${p}.${norm}`, d.model, 'layernorm', h)))]);
  return g.norm(`${p}.${norm}`, d.model, 'layernorm', g.sum(`${p}.${name}_residual`, [h, g.dropout(`${p}.${name}_dropout`, d.dropout, f(h))]));
}

/**
 * A stack's `layers.N` from `prefix` (`model.encoder`): self-attention (causal in the decoder, which is the stack given
 * `encoderOut`), cross-attention on `encoderOut`, and the feed-forward block.
 */
export function stackLayers(g: HfGraph, prefix: string, h: string, d: Seq2SeqDims, s: StackDims, encoderOut?: string): string {
  for (let i = 0; i < s.layers; i++) {
    const p = `${prefix}.layers.${i}`;
    h = sublayer(g, p, 'self_attn', 'self_attn_layer_norm', h, d, (x) => attention(g, `${p}.self_attn`, x, x, d, s.heads, encoderOut !== undefined));
    if (encoderOut !== undefined) h = sublayer(g, p, 'encoder_attn', 'encoder_attn_layer_norm', h, d, (x) => attention(g, `${p}.encoder_attn`, x, encoderOut, d, s.heads, false));
    h = sublayer(g, p, 'ffn', 'final_layer_norm', h, d, (x) => {
      const activated = g.act(`${p}.activation_fn`, d.act, g.linear(`${p}.fc1`, d.model, s.ffn, true, x));
      return g.linear(`${p}.fc2`, s.ffn, d.model, true, g.dropout(`${p}.activation_dropout`, d.activationDropout, activated));
    });
  }
  return h;
}

/**
 * The loss BartForConditionalGeneration and WhisperForConditionalGeneration compute when a training step passes
 * labels: `CrossEntropyLoss()(lm_logits.view(-1, vocab_size), labels.view(-1))`, a log-softmax over the vocabulary
 * kept for the backward, then one reduction over the tokens (the batch mean is outside the per-sample graph). Neither
 * file upcasts the logits first (unlike ForCausalLMLoss, graph.ts causalLmLoss), so the log-probabilities are at the
 * run's precision; under autocast log_softmax runs in fp32 (core/autocast.ts).
 */
export function crossEntropyLoss(g: HfGraph, logits: string): string {
  const logProbs = g.add('loss.log_softmax', 'CrossEntropyLoss', 'activation', { fn: 'log_softmax', axis: -1 }, [logits]);
  return g.field('loss', g.add('loss', 'CrossEntropyLoss', 'reduce', { fn: 'sum', allAxes: true, keepDims: false }, [logProbs]));
}

/**
 * encoder_layerdrop / decoder_layerdrop skip each layer of a training step with that probability (LayerDrop, Fan et
 * al. 2019); WAP builds every layer, the step that runs them all, and says so when either is set.
 */
export function layerDropNote(g: HfGraph, config: HfConfig, what: string): void {
  const rates = (['encoder', 'decoder'] as const).map((side) => [side, rateField(config, `${side}_layerdrop`)] as const).filter(([, p]) => p > 0);
  if (rates.length === 0) return;
  const said = rates.map(([side, p]) => `${side}_layerdrop ${p}`).join(', ');
  g.diagnostics.push(diagnosticAt('info', 'hf-layerdrop', `${what}: ${said} skips layers at random in training; WAP prices every layer, as the steps that skip none run them`, g.range));
}
