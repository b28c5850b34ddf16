/** Shared helpers for the catalogue tests: infer one layer and expect success or a clear error. */
import assert from 'node:assert/strict';
import { inferLayer, isInferError } from '../../src/core/catalogue/index';
import type { InferOk } from '../../src/core/catalogue/index';
import type { Attrs, Layout, Shape } from '../../src/core/ir';

export const CF = { layout: 'channels_first' as Layout, dtypeBytes: 4 };
export const CL = { layout: 'channels_last' as Layout, dtypeBytes: 4 };

export function ok(op: string, shapes: Shape[], attrs: Attrs, ctx = CF): InferOk {
  const r = inferLayer(op, shapes, attrs, ctx);
  if (isInferError(r)) assert.fail(`unexpected error: ${r.error}`);
  return r;
}

export function err(op: string, shapes: Shape[], attrs: Attrs, ctx = CF): string {
  const r = inferLayer(op, shapes, attrs, ctx);
  assert.ok(isInferError(r), `expected an error, got ${JSON.stringify(r)}`);
  return r.error;
}
