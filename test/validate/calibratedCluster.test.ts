/**
 * The cluster `wap validate` predicts on, from its own measurements: every number checked by hand from the
 * measured points (no torch needed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calibratedCluster } from '../../src/validate/calibratedCluster';
import { gpuMemoryBytes } from '../../src/planner/index';

// Two all-reduces over 4 ranks: 1 MB in 0.3 ms and 9 MB in 1.1 ms, so 0.1 ms per MB (10 GB/s) and α = 0.2 ms.
const points = [
  { bytes: 1e6, ms: 0.3 },
  { bytes: 9e6, ms: 1.1 },
];

test("a calibrated process's memory is the bytes measured, as the planner reads them", () => {
  const { cluster } = calibratedCluster('CPU process', 4, 6e9, 0.05, points, 12);
  assert.equal(cluster.gpus.length, 4);
  // Spec memory is binary (memoryGB × 2^30); 6e9 bytes must come back as 6e9, not 6 × 2^30 = 6.44e9.
  for (const g of cluster.gpus) assert.ok(Math.abs(gpuMemoryBytes(g) - 6e9) < 1e-3, `${gpuMemoryBytes(g)} bytes`);
});

test('the link comes from the fitted all-reduce through the ring formula 2(p−1)/p · bytes/bw + 2(p−1)·α', () => {
  const { cluster, calibration } = calibratedCluster('CPU process', 4, 6e9, 0.05, points, 12);
  assert.ok(Math.abs(calibration.allreduceBandwidthGBs - 10) < 1e-9, `${calibration.allreduceBandwidthGBs}`);
  assert.ok(Math.abs(calibration.allreduceAlphaUs - 200) < 1e-9, `${calibration.allreduceAlphaUs}`);
  // p = 4: bw = 10 · 2·3/4 = 15 GB/s, α = 200 µs / (2·3).
  assert.ok(Math.abs(cluster.intraNode.bandwidthGBs - 15) < 1e-9, `${cluster.intraNode.bandwidthGBs}`);
  assert.ok(Math.abs(cluster.intraNode.latencyUs - 200 / 6) < 1e-9, `${cluster.intraNode.latencyUs}`);
  assert.equal(cluster.gpus[0]!.memoryBandwidthGBs, 12);
  assert.deepEqual(cluster.gpus[0]!.peakTflops, { fp32: 0.05 });
});
