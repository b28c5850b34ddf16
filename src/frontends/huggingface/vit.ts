/**
 * ViT (modeling_vit.py): a Conv2d patch projection, a class token prepended
 * and learned position embeddings added (both nn.Parameters: carried as
 * `extraParams` on the layers that use them), pre-norm encoder blocks with
 * query/key/value biases (qkv_bias), a final LayerNorm, and the pooler
 * (ViTModel) or a classifier on the class token (ViTForImageClassification).
 */
import { boolField, intField, POOLER_OFF, rateField, strField } from './configs';
import type { BuildContext } from './decoder';

export function buildVit(ctx: BuildContext): string[] {
  const { graph: g, config } = ctx;
  const hidden = intField(config, 'hidden_size');
  const heads = intField(config, 'num_attention_heads');
  const layers = intField(config, 'num_hidden_layers');
  const inner = intField(config, 'intermediate_size');
  const image = intField(config, 'image_size');
  const patch = intField(config, 'patch_size');
  const channels = intField(config, 'num_channels');
  const bias = boolField(config, 'qkv_bias', true);
  const act = strField(config, 'hidden_act', 'gelu');
  const hiddenDrop = rateField(config, 'hidden_dropout_prob');
  if (hidden % heads !== 0) throw new Error(`hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  if (patch < 1 || image % patch !== 0) throw new Error(`image_size ${image} is not a multiple of patch_size ${patch}`);
  const tokens = (image / patch) ** 2 + 1;
  const base = ctx.head === 'base' ? '' : 'vit.';

  const pixels = g.input('pixel_values', [channels, image, image], 'float');
  const patches = g.add(`${base}embeddings.patch_embeddings.projection`, 'Conv2d', 'conv', {
    rank: 2, inChannels: channels, outChannels: hidden, kernel: [patch, patch], stride: [patch, patch], padding: [[0, 0], [0, 0]], dilation: [1, 1], groups: 1, bias: true,
  }, [pixels]);
  const flat = g.add(`${base}embeddings.patch_embeddings.flatten`, 'flatten', 'flatten', { startDim: 2, endDim: -1 }, [patches]);
  // torch.cat((cls_tokens, embeddings), dim=1) on [h, N] channels-first: one more position in front.
  const withCls = g.add(`${base}embeddings.cls_token`, 'torch.cat (cls_token)', 'zeropad', { padding: [[1, 0]], extraParams: hidden }, [flat]);
  const seq = g.add(`${base}embeddings.transpose`, 'transpose', 'permute', { dims: [0, 2, 1] }, [withCls]);
  let h = g.dropout(`${base}embeddings.dropout`, hiddenDrop, g.add(`${base}embeddings.position_embeddings`, 'add (position_embeddings)', 'add', { extraParams: tokens * hidden }, [seq]));
  for (let i = 0; i < layers; i++) {
    const p = `${base}encoder.layer.${i}`;
    const n1 = g.norm(`${p}.layernorm_before`, hidden, 'layernorm', h);
    const q = g.linear(`${p}.attention.attention.query`, hidden, hidden, bias, n1);
    const k = g.linear(`${p}.attention.attention.key`, hidden, hidden, bias, n1);
    const v = g.linear(`${p}.attention.attention.value`, hidden, hidden, bias, n1);
    const a = g.attention(`${p}.attention.attention`, q, k, v, { heads, kvHeads: heads, headDim: hidden / heads, causal: false, dropout: rateField(config, 'attention_probs_dropout_prob') });
    const r1 = g.sum(`${p}.residual_attn`, [g.dropout(`${p}.attention.output.dropout`, hiddenDrop, g.linear(`${p}.attention.output.dense`, hidden, hidden, true, a)), h]);
    const n2 = g.norm(`${p}.layernorm_after`, hidden, 'layernorm', r1);
    const up = g.act(`${p}.intermediate.intermediate_act_fn`, act, g.linear(`${p}.intermediate.dense`, hidden, inner, true, n2));
    h = g.sum(`${p}.residual_mlp`, [g.dropout(`${p}.output.dropout`, hiddenDrop, g.linear(`${p}.output.dense`, inner, hidden, true, up)), r1]);
  }
  h = g.norm(`${base}layernorm`, hidden, 'layernorm', h);
  if (ctx.head === 'base') g.field('last_hidden_state', h);
  // add_pooling_layer=False: ViTModel returns its last hidden state only.
  if (ctx.head === 'base' && config[POOLER_OFF] === true) return [h];
  const first = g.add(ctx.head === 'base' ? 'pooler.first_token' : 'classifier.first_token', 'select class token', 'split', { axis: 1, sizes: [1], index: 0 }, [h]);
  if (ctx.head === 'base') return [g.field('pooler_output', g.act('pooler.activation', 'tanh', g.linear('pooler.dense', hidden, hidden, true, first), 'Tanh'))];
  if (ctx.head !== 'image-classification') throw new Error(`ViT has no ${ctx.head} head in WAP's catalogue`);
  return [g.field('logits', g.linear('classifier', hidden, intField(config, 'num_labels', 2), true, first))];
}
