/** Layout changes and layer configurations checked by hand: what each device must fetch, and what a split consumes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inputLayout, outputLayout } from '../../src/planner/cost/configs';
import { redistribution } from '../../src/planner/cost/layout';

const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;

test('redistribution by hand: all-gather, batch → replicated, and no change', () => {
  const same = redistribution({ d: 2, k: 2, sharded: true }, { d: 2, k: 2, sharded: true });
  assert.deepEqual([same.fraction, same.sources], [0, 0]);
  // Two feature shards → both replicas need the other half, from one peer.
  const gather = redistribution({ d: 1, k: 2, sharded: true }, { d: 1, k: 2, sharded: false });
  assert.ok(near(gather.fraction, 0.5) && gather.sources === 1, JSON.stringify(gather));
  // Four batch shards → every device needs the whole batch: three quarters from three peers.
  const batch = redistribution({ d: 4, k: 1, sharded: false }, { d: 1, k: 4, sharded: false });
  assert.ok(near(batch.fraction, 0.75) && batch.sources === 3, JSON.stringify(batch));
  // Replicated → sharded needs nothing: each device already holds its shard.
  const slice = redistribution({ d: 1, k: 2, sharded: false }, { d: 1, k: 2, sharded: true });
  assert.ok(near(slice.fraction, 0) && slice.sources === 0, JSON.stringify(slice));
});

test('redistribution by hand: 2 batch × 2 feature shards → 4 feature shards of the whole batch', () => {
  // Device 1 held batch [0, ½] × features [½, 1] and needs all the batch × features [¼, ½]: none of it is local,
  // a quarter of the tensor, from the two devices holding features [0, ½] (device 0's half batch, device 2's).
  // Device 0 needs [0, ¼] and holds half of it: it lacks only an eighth.
  const r = redistribution({ d: 2, k: 2, sharded: true }, { d: 1, k: 4, sharded: true });
  assert.ok(Math.abs(r.fraction - 1 / 4) < 1e-12, String(r.fraction));
  assert.equal(r.sources, 2);
});

test('what each split consumes and produces: row parallel reads a feature shard, column parallel writes one', () => {
  assert.equal(inputLayout({ d: 1, k: 2, split: 'in' }).sharded, true);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'out' }).sharded, false);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'shard' }).sharded, true);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'rep' }).sharded, false);
  assert.equal(outputLayout({ d: 1, k: 2, split: 'out' }).sharded, true);
  assert.equal(outputLayout({ d: 1, k: 2, split: 'in' }).sharded, false);
  assert.equal(outputLayout({ d: 2, k: 1, split: 'none' }).sharded, false);
});

test('redistribution by hand: batch shards ↔ feature shards, coarser and finer batch splits', () => {
  const r = (a: [number, number, boolean], b: [number, number, boolean]) => {
    const x = redistribution({ d: a[0], k: a[1], sharded: a[2] }, { d: b[0], k: b[1], sharded: b[2] });
    return [Math.round(x.fraction * 1e9) / 1e9, x.sources];
  };
  // Device j holds batch quarter j (all features) and needs feature quarter j (whole batch):
  // it has 1/16 of what it needs, lacks 3/16, from the 3 other devices. The reverse is symmetric.
  assert.deepEqual(r([4, 1, false], [1, 4, true]), [0.1875, 3]);
  assert.deepEqual(r([1, 4, true], [4, 1, false]), [0.1875, 3]);
  // Four feature shards → replicated: three quarters from three peers.
  assert.deepEqual(r([1, 4, true], [1, 4, false]), [0.75, 3]);
  // Batch halves → batch quarters: each device's quarter is inside the half it holds.
  assert.deepEqual(r([2, 2, false], [4, 1, false]), [0, 0]);
  // Batch quarters → batch halves: each device lacks a quarter, held by one peer.
  assert.deepEqual(r([4, 1, false], [2, 2, false]), [0.25, 1]);
  // 2 batch halves × 2 feature shards → 4 batch quarters (all features): half of what j needs is on one peer.
  assert.deepEqual(r([2, 2, true], [4, 1, false]), [0.125, 1]);
  // Thirds → halves (n = 6): device 2 holds the middle third [1/3, 2/3) but needs the first half,
  // of which it has [1/3, 1/2): it lacks 1/2 − 1/6 = 1/3, all in the first third (one peer).
  assert.deepEqual(r([3, 2, false], [2, 3, false]), [Math.round((1 / 3) * 1e9) / 1e9, 1]);
});
