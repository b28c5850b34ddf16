/** Combining and applying text edits: what "Fix all" and `wap config --fix` do. */
import type { ConfigFix, TextEdit } from './types';

const same = (a: TextEdit, b: TextEdit): boolean => a.start === b.start && a.end === b.end && a.newText === b.newText;
const overlaps = (a: TextEdit, b: TextEdit): boolean =>
  (a.start < b.end && b.start < a.end) || (a.start === b.start && (a.start === a.end || b.start === b.end));

/**
 * Chooses fixes whose edits do not clash, preferred fixes first. Two fixes
 * that make the identical edit (e.g. both switch distributed_type to
 * MULTI_GPU) do not clash; the edit is kept once.
 */
export function combineFixes(fixes: ConfigFix[]): TextEdit[] {
  const safe = fixes.filter((f) => !f.changesTraining);
  const ordered = [...safe.filter((f) => f.preferred), ...safe.filter((f) => !f.preferred)];
  const accepted: TextEdit[] = [];
  for (const fix of ordered) {
    const fresh = fix.edits.filter((e) => !accepted.some((a) => same(a, e)));
    const clash = fresh.some((e, i) => accepted.some((a) => overlaps(a, e)) || fresh.some((o, j) => j !== i && overlaps(o, e)));
    if (!clash) accepted.push(...fresh);
  }
  return accepted.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Applies non-overlapping edits (offsets into the original text). */
export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let pos = 0;
  for (const e of sorted) {
    if (e.start < pos) throw new Error(`overlapping edits at offset ${e.start}`);
    out += text.slice(pos, e.start) + e.newText;
    pos = e.end;
  }
  return out + text.slice(pos);
}
