/** Timeline lanes: each GPU lane is labelled with the GPU its events ran on. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanReport } from '../../src/protocol/plan';
import { buildTimeline } from '../../webview/timelineModel';

const fixture = (name: string): PlanReport => JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', `${name}.json`), 'utf8'));

test('every GPU lane label names the device of the events on it, GPU 0 included', () => {
  for (const name of ['plan-alexnet-pcie4', 'plan-vgg16-hybrid-2x2']) {
    const r = fixture(name);
    const model = buildTimeline(r.timeline, r.plan.gpus, r.plan.stepTimeMs);
    const gpuLanes = model.lanes.filter((l) => l.kind === 'gpu');
    assert.ok(gpuLanes.length >= 2, `${name}: several GPU lanes`);
    assert.equal(gpuLanes[0]!.label, 'GPU 0', `${name}: the first lane is GPU 0`);
    for (const lane of gpuLanes) {
      const devices = new Set(lane.events.map((e) => e.device));
      assert.ok(devices.size <= 1, `${name}: lane ${lane.label} mixes devices ${[...devices]}`);
      for (const d of devices) assert.equal(lane.label, `GPU ${d}`, `${name}: lane ${lane.id}`);
    }
  }
});
