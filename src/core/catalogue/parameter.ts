/**
 * parameter: a learned tensor the model reads directly in forward
 * (nn.Parameter: ViT's class token and position embedding, ConvNeXt's layer
 * scale). It has no inputs; its output is the tensor itself and its params
 * are its elements. Without this node such weights would be missing from the
 * model's count. Read through a constant index (`gathered`), it outputs the
 * gathered shape and still counts the table's own elements.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { fail, optIntList } from './attrs';
import type { InferOk, OpInfo } from './types';

function inferParameter(_inputShapes: Shape[], attrs: Attrs): InferOk {
  const shape = optIntList(attrs, 'shape');
  if (!shape || shape.length === 0 || shape.some((d) => !(d > 0))) fail('parameter: its shape is not known');
  const batched = attrs.batched === true && shape.length > 1 && shape[0] === 1;
  const gathered = optIntList(attrs, 'gathered');
  if (gathered && (gathered.length === 0 || gathered.some((d) => !(d > 0)))) fail('parameter: its gathered shape is not known');
  // A constant (a registered buffer a module is called on) has no parameters of its own.
  const constant = attrs.constant === true;
  return {
    outputShape: gathered ?? (batched ? shape.slice(1) : shape),
    params: constant ? 0 : product(shape),
    nonTrainable: 0,
    forwardFlops: 0,
    backwardFlops: 0,
    savedActivationBytes: 0,
  };
}

export const parameterOps: OpInfo[] = [
  { op: 'parameter', family: 'io', weighted: true, summary: 'Learned tensor used directly (nn.Parameter)', infer: inferParameter },
];
