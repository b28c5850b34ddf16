import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCostTables } from '../../src/planner/cost/tableBuilder';
import { Topology, range } from '../../src/planner/cost/topology';
import { CLUSTER_PRESETS } from '../../src/planner/cluster/presets';
import { bruteForceSearch } from '../../src/planner/search/bruteForce';
import { chainSearch, isChain } from '../../src/planner/search/chain';
import { eliminationSearch } from '../../src/planner/search/eliminate';
import { ModelBuilder } from './fixtures';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function randomChain(r: () => number, layers: number) {
  const b = new ModelBuilder('rand', [16, 32, 32]);
  let x = 'x';
  let flat = false;
  for (let i = 0; i < layers; i++) {
    const p = r();
    if (!flat && p < 0.4) x = b.conv(`c${i}`, x, 8 + Math.floor(r() * 120), 3, 1, 1);
    else if (!flat && p < 0.55) x = b.pool(`p${i}`, x, 2, 2);
    else if (p < 0.75) x = b.act(`a${i}`, x);
    else {
      if (!flat) {
        x = b.flatten(`f${i}`, x);
        flat = true;
      } else x = b.linear(`l${i}`, x, 64 + Math.floor(r() * 4000));
    }
  }
  return b.build();
}

const presets = ['pcie4', 'dgx1-v100', 'h100x16-2node'];

test('chain search equals brute force on random chains (≤ 6 layers, ≤ 4 GPUs)', () => {
  const r = rng(7);
  let cases = 0;
  for (let trial = 0; trial < 60; trial++) {
    const model = randomChain(r, 2 + Math.floor(r() * 5));
    const topo = new Topology(CLUSTER_PRESETS[presets[trial % presets.length]].spec);
    const n = 1 + Math.floor(r() * 4);
    const batch = [8, 32, 128][trial % 3];
    const t = buildCostTables(model, topo, range(0, n), batch, { mode: 'hybrid', optimizer: 'adam' });
    assert.ok(isChain(t));
    const node = (i: number, o: number) => t.options[i][o].timeMs;
    const dp = chainSearch(t, node);
    const bf = bruteForceSearch(t, node);
    assert.ok(Math.abs(dp.cost - bf.cost) <= 1e-9 * Math.max(1, bf.cost), `trial ${trial}: dp ${dp.cost} vs brute force ${bf.cost}`);
    const el = eliminationSearch(t, node);
    assert.ok(el.exact);
    assert.ok(Math.abs(el.cost - bf.cost) <= 1e-9 * Math.max(1, bf.cost));
    cases += bf.evaluated;
  }
  assert.ok(cases > 1000, `enumerated ${cases} assignments`);
});

test('DAG elimination equals brute force on random residual graphs', () => {
  const r = rng(11);
  for (let trial = 0; trial < 25; trial++) {
    const b = new ModelBuilder('dag', [32, 16, 16]);
    let x = b.conv('stem', 'x', 32, 3, 1, 1);
    const blocks = 1 + Math.floor(r() * 2);
    for (let k = 0; k < blocks; k++) {
      const y = b.conv(`b${k}.c`, b.act(`b${k}.a`, x), 32, 3, 1, 1);
      x = b.addOp(`b${k}.add`, x, y);
    }
    const model = b.build();
    const topo = new Topology(CLUSTER_PRESETS.pcie4.spec);
    const n = 2 + Math.floor(r() * 3);
    const t = buildCostTables(model, topo, range(0, n), 64, { mode: 'hybrid', optimizer: 'sgd' });
    assert.equal(isChain(t), false);
    const node = (i: number, o: number) => t.options[i][o].timeMs;
    const el = eliminationSearch(t, node);
    const bf = bruteForceSearch(t, node);
    assert.equal(el.method, 'dag-dp');
    assert.ok(Math.abs(el.cost - bf.cost) <= 1e-9 * Math.max(1, bf.cost), `trial ${trial}: ${el.cost} vs ${bf.cost}`);
  }
});

test('a non-series-parallel graph falls back to bounded local search and reports the bound', () => {
  // a → b, a → c, b → d, c → d, b → c: the b→c edge makes it irreducible by series/parallel steps.
  const b = new ModelBuilder('k4', [64]);
  const a = b.linear('a', 'x', 256);
  const bb = b.linear('b', a, 256);
  const c = b.add('c', 'add', [a, bb], [[256], [256]], [256], { forwardFlops: 256, backwardFlops: 256 });
  b.add('d', 'add', [bb, c], [[256], [256]], [256], { forwardFlops: 256, backwardFlops: 256 });
  const model = b.build();
  const t = buildCostTables(model, new Topology(CLUSTER_PRESETS.pcie4.spec), range(0, 4), 32, { mode: 'hybrid', optimizer: 'sgd' });
  const node = (i: number, o: number) => t.options[i][o].timeMs;
  const el = eliminationSearch(t, node);
  const bf = bruteForceSearch(t, node);
  assert.equal(el.method, 'local-search');
  assert.equal(el.exact, false);
  assert.match(el.bound ?? '', /local search stopped after \d+ passes.*lower bound/);
  assert.ok(el.cost >= bf.cost - 1e-9);
});
