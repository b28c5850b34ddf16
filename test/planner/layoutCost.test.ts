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

test('what each split consumes and produces: row parallel reads a feature shard, column parallel writes one', () => {
  assert.equal(inputLayout({ d: 1, k: 2, split: 'in' }).sharded, true);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'out' }).sharded, false);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'shard' }).sharded, true);
  assert.equal(inputLayout({ d: 1, k: 2, split: 'rep' }).sharded, false);
  assert.equal(outputLayout({ d: 1, k: 2, split: 'out' }).sharded, true);
  assert.equal(outputLayout({ d: 1, k: 2, split: 'in' }).sharded, false);
  assert.equal(outputLayout({ d: 2, k: 1, split: 'none' }).sharded, false);
});
