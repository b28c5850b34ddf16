/**
 * The parameters torch registers on a layer, by the names `named_parameters()`
 * gives them (`weight`, `bias`, `in_proj_weight`, `weight_ih_l0_reverse`, …),
 * for an IR op and its attrs. A script that freezes by name
 * (`if not name.startswith("fc"): p.requires_grad = False`) is decided on
 * these names, so they follow torch.nn's modules (torch 1.13 and later):
 * Linear, ConvNd, Embedding, BatchNorm, LayerNorm and GroupNorm register `weight` and,
 * when present, `bias`; MultiheadAttention its packed `in_proj_*` and
 * `out_proj.*`; RNN/LSTM/GRU `weight_ih_l{k}` (`_reverse` for the backward
 * direction) and their biases.
 */
import type { Attrs, OpKind } from '../../core/ir';

/**
 * The names (relative to the layer's module) of the parameters an op registers; [] for ops without parameters;
 * undefined where WAP does not know them (an opaque layer, a Keras-only op).
 */
export function torchParameterNames(op: OpKind, attrs: Attrs): string[] | undefined {
  const has = (key: string, fallback = true): boolean => (typeof attrs[key] === 'boolean' ? (attrs[key] as boolean) : fallback);
  const weightAndBias = (weight: boolean, bias: boolean): string[] => [...(weight ? ['weight'] : []), ...(bias ? ['bias'] : [])];
  switch (op) {
    case 'linear':
    case 'conv':
      return weightAndBias(true, has('bias'));
    case 'embedding':
      return ['weight'];
    case 'batchnorm':
    case 'layernorm':
      return weightAndBias(has('scale'), has('center'));
    case 'groupnorm':
      return weightAndBias(has('affine'), has('affine'));
    case 'mha': {
      // Different key/value sizes make torch register separate projections instead of the packed one.
      const packed = (attrs.kdim === undefined || attrs.kdim === attrs.embedDim) && (attrs.vdim === undefined || attrs.vdim === attrs.embedDim);
      const inputs = packed ? ['in_proj_weight'] : ['q_proj_weight', 'k_proj_weight', 'v_proj_weight'];
      return has('bias') ? [...inputs, 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'] : [...inputs, 'out_proj.weight'];
    }
    case 'rnn':
      return recurrentNames(attrs);
    case 'parameter':
      // An nn.Parameter is its own name (the layer is named after it); a constant buffer has none.
      return attrs.constant === true ? [] : [''];
    case 'separable_conv':
    case 'opaque':
      return undefined;
    default:
      return [];
  }
}

function recurrentNames(attrs: Attrs): string[] {
  const layers = typeof attrs.numLayers === 'number' ? attrs.numLayers : 1;
  const directions = attrs.bidirectional === true ? ['', '_reverse'] : [''];
  const bias = attrs.bias !== false;
  const names: string[] = [];
  for (let k = 0; k < layers; k++) {
    for (const d of directions) {
      names.push(`weight_ih_l${k}${d}`, `weight_hh_l${k}${d}`);
      if (bias) names.push(`bias_ih_l${k}${d}`, `bias_hh_l${k}${d}`);
    }
  }
  return names;
}

/** A module's parameter name joined to its path (`encoder.pos_embedding` for an nn.Parameter, whose own name is ''). */
export function joinParameterName(modulePath: string, name: string): string {
  if (!name) return modulePath;
  return modulePath ? `${modulePath}.${name}` : name;
}
