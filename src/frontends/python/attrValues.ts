/**
 * Evaluated Python values as the IR's layer attributes (core/ir.ts AttrValue): the literal form a catalogue entry
 * reads a constructor argument in, or nothing where the value has none.
 */
import type { AttrValue } from '../../core/ir';
import type { Value } from './values';

/** Converts an evaluated Python value to an attribute value; undefined if it has no literal form. */
export function toAttr(v: Value | undefined): AttrValue | undefined {
  if (!v) return undefined;
  switch (v.k) {
    case 'none':
      return null;
    case 'bool':
      return v.v;
    case 'num':
      return v.v;
    case 'str':
      return v.v;
    case 'list':
    case 'tuple': {
      const out: AttrValue[] = [];
      for (const item of v.items) {
        const a = toAttr(item);
        if (a === undefined) return undefined;
        out.push(a);
      }
      return out;
    }
    default:
      return undefined;
  }
}
