/**
 * "Fix all": fixes whose edits clash are dropped whole (never half applied),
 * an edit two fixes share is made once, and the result is in text order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyTextEdits, combineFixes } from '../../src/configs/edits';
import type { ConfigFix } from '../../src/configs/types';

const fix = (title: string, edits: ConfigFix['edits'], preferred = false): ConfigFix => ({ title, edits, preferred });

test('combined edits come out in text order, whatever order the fixes came in', () => {
  const edits = combineFixes([fix('c', [{ start: 20, end: 21, newText: 'C' }]), fix('b', [{ start: 10, end: 11, newText: 'B' }]), fix('a', [{ start: 0, end: 1, newText: 'A' }])]);
  assert.deepEqual(edits.map((e) => e.start), [0, 10, 20]);
});

test('a fix that clashes with an accepted one is dropped whole, not applied in part', () => {
  const text = '0123456789abcdef';
  const first = fix('insert at 0', [{ start: 0, end: 0, newText: 'A' }], true);
  // Its first edit replaces text where the accepted insertion goes; its second alone would apply cleanly.
  const second = fix('replace 0-3 and insert at 10', [{ start: 0, end: 3, newText: 'B' }, { start: 10, end: 10, newText: 'C' }]);
  const edits = combineFixes([first, second]);
  assert.deepEqual(edits, [{ start: 0, end: 0, newText: 'A' }]);
  assert.equal(applyTextEdits(text, edits), 'A0123456789abcdef');
  // The identical edit in two fixes is made once.
  const shared = { start: 4, end: 5, newText: 'X' };
  assert.deepEqual(combineFixes([fix('one', [shared]), fix('two', [{ ...shared }, { start: 12, end: 12, newText: 'Y' }])]), [shared, { start: 12, end: 12, newText: 'Y' }]);
});
