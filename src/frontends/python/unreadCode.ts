/**
 * What code WAP did not run may have changed: a loop over data it cannot iterate, or the branches of an `if` that
 * asks the run's GPU (branches.ts). A script builds its vocabulary in a loop over a file's lines (the word language
 * model example: `for word in line.split(): self.dictionary.add_word(word)`); skipped, the lists it fills stayed
 * empty, and `len(corpus.dictionary)` sized an Embedding of 0 rows. So the names the code assigns, the containers it
 * calls methods on, and the list and dict attributes of an object whose own method it calls are unknown afterwards,
 * with why: a size read from them then says where it came from.
 */
import { basename } from 'node:path';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import { evalExpr } from './expressions';
import { setAttr } from './access';
import type { Interp } from './interpreter';
import type { Scope, Value } from './values';

/** Receivers worth forgetting: a plain name or an attribute chain, never a call (which could do anything again). */
function isPlainReceiver(node: PyNode): boolean {
  if (node.type === 'identifier') return true;
  if (node.type !== 'attribute') return false;
  const object = field(node, 'object');
  return !!object && isPlainReceiver(object);
}

/** Makes `target` unknown, as an assignment to it would. */
function forget(interp: Interp, target: PyNode, unknown: Value, scope: Scope): void {
  if (target.type === 'identifier') {
    interp.bind(interp.text(target), unknown, scope);
    return;
  }
  const object = field(target, 'object');
  const attribute = field(target, 'attribute');
  if (target.type !== 'attribute' || !object || !attribute || !isPlainReceiver(object)) return;
  const owner = evalExpr(interp, object, scope);
  if (owner.k === 'inst' && !owner.children) setAttr(interp, owner, interp.text(attribute), unknown, target);
}

/** Forgets what `bodies` may change, each such value unknown because `why`. */
export function forgetUnreadEffects(interp: Interp, bodies: PyNode[], why: string, scope: Scope): void {
  const unknown: Value = { k: 'unknown', why };
  const visit = (node: PyNode): void => {
    if (node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'lambda') return;
    if (node.type === 'assignment' || node.type === 'augmented_assignment') {
      const left = field(node, 'left');
      if (left) forget(interp, left, unknown, scope);
    }
    if (node.type === 'call') {
      const fn = field(node, 'function');
      const receiver = fn?.type === 'attribute' ? field(fn, 'object') : undefined;
      if (receiver && isPlainReceiver(receiver)) {
        const value = evalExpr(interp, receiver, scope);
        if (value.k === 'list' || value.k === 'dict') forget(interp, receiver, unknown, scope);
        // An object of the script's own whose method fills it (a vocabulary's add_word): its containers are the data's.
        else if (value.k === 'inst' && !value.children) {
          for (const [name, held] of value.attrs) if (held.k === 'list' || held.k === 'dict') value.attrs.set(name, unknown);
        }
      }
    }
    for (const child of namedChildren(node)) visit(child);
  };
  for (const body of bodies) visit(body);
}

/** A loop over `over`, skipped because WAP cannot iterate it: what its body may change is the data's. */
export function forgetLoopEffects(interp: Interp, body: PyNode, over: PyNode, scope: Scope): void {
  const text = interp.text(over).replace(/\s+/g, ' ');
  const at = rangeOf(over);
  const where = `${at.file ? `${basename(at.file)}:` : 'line '}${at.line}`;
  forgetUnreadEffects(interp, [body], `the loop over \`${text.length > 50 ? `${text.slice(0, 47)}…` : text}\` (${where}) runs on values WAP cannot know and may change it`, scope);
}
