/** The plan flags that choose how kernels run reach PlanOptions, and bad values are refused by name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planOptionsFrom } from '../../src/cli/planFlags';

test('--attention and --memory-format set PlanOptions; absent, the planner defaults apply', () => {
  const o = planOptionsFrom({ attention: 'unfused', 'memory-format': 'channels_last' });
  assert.equal(o.attentionKernel, 'unfused');
  assert.equal(o.memoryFormat, 'channels_last');
  const plain = planOptionsFrom({});
  assert.equal(plain.attentionKernel, undefined);
  assert.equal(plain.memoryFormat, undefined);
  assert.throws(() => planOptionsFrom({ attention: 'flash' }), /--attention must be one of fused, unfused/);
  assert.throws(() => planOptionsFrom({ 'memory-format': 'nhwc' }), /--memory-format must be one of/);
});
