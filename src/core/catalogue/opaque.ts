/**
 * opaque: a layer the frontend could not map (unknown type, or a call it could
 * not evaluate). Inference always fails with the reason, which analyzeModel turns
 * into an 'unknown-layer' warning; downstream shapes become undefined.
 */
import type { Attrs } from '../ir';
import { optStr } from './attrs';
import type { InferError, OpInfo } from './types';

function inferOpaque(_inputShapes: unknown, attrs: Attrs): InferError {
  const reason = optStr(attrs, 'reason');
  return { error: reason ? `WAP cannot infer this layer: ${reason}` : 'WAP does not know this layer type, so its output shape and workload are unknown' };
}

export const opaqueOps: OpInfo[] = [
  { op: 'opaque', family: 'opaque', weighted: false, summary: 'Unknown layer: shape and workload cannot be inferred', infer: inferOpaque },
];
