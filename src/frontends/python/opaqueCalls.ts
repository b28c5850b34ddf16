/**
 * The evaluator's safety net against silent drops: a call WAP cannot model
 * (an unresolved import, an unknown library function, a value it could not
 * compute) that receives tensors becomes an opaque layer with the reason,
 * instead of an Unknown that quietly cuts the graph. The core then reports the
 * layer (with its range) and marks the model incomplete.
 */
import type { Interp } from './interpreter';
import { tensorsIn } from './tensorOps';
import { UNKNOWN, type CallSite, type Value } from './values';

export function opaqueCall(interp: Interp, callee: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite, result?: Value): Value {
  const graph = interp.graph;
  const tensors = tensorsIn([...args, ...kwargs.values()]).filter((t) => t.id !== '');
  if (!graph || tensors.length === 0) {
    // A library call that said why its value is unknown (a settings file that is not there) keeps that reason.
    if (result?.k === 'unknown' && result.why) return result;
    // Keep the reason on the value: a module built here and called later in forward says what it was.
    if (callee.k === 'lib' && /^[A-Z]/.test(callee.path.slice(callee.path.lastIndexOf('.') + 1)) && !/^(torch|keras|collections|typing|enum|dataclasses|functools)\./.test(callee.path)) {
      return { k: 'unknown', why: `'${callee.path}' is not something WAP models (an unresolved import or an unsupported library class)` };
    }
    // A module built from an unresolved name keeps that name's reason for the layer it becomes in forward.
    if (callee.k === 'unknown' && callee.why) return callee;
    return UNKNOWN;
  }
  const written = site.calleeText.replace(/^self\./, '').replace(/\(.*$/s, '');
  const name = graph.freshName(written.replace(/[^\w.]/g, '_') || 'call');
  const why =
    callee.k === 'lib'
      ? `'${callee.path}' is not something WAP models (an unresolved import or an unsupported library call)`
      : callee.k === 'unknown' && callee.why
        ? callee.why
        : `WAP could not tell what '${site.calleeText}' is when reading the code`;
  return graph.add({ name, type: written || 'call', op: 'opaque', attrs: { reason: why }, inputs: [...new Set(tensors.map((t) => t.id))], range: site.range }, undefined);
}
