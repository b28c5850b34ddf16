/**
 * The value half of Hydra's command-line override grammar (Hydra docs, 'Basic Override syntax' and 'Extended Override
 * syntax'): a bare primitive, a quoted string, a list or a dict, or a sweep of which one run takes the first value.
 */
/** A bare override value typed as Hydra's grammar types it (Hydra docs, 'Basic Override syntax'). */
function primitive(t: string): unknown {
  if (/^null$/i.test(t)) return null;
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  if (/^[+-]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?$/.test(t)) return Number(t.replace(/_/g, ''));
  if (/^[+-]?(inf|nan)$/i.test(t)) return /nan/i.test(t) ? NaN : t.startsWith('-') ? -Infinity : Infinity;
  return t;
}

/** One element of an override value from `at.i`: a quoted string, `[...]`, `{k: v}` or a bare primitive. */
function readElement(s: string, at: { i: number }, stops: string): unknown {
  const skip = () => { while (s[at.i] === ' ') at.i++; };
  skip();
  const c = s[at.i];
  if (c === '[' || c === '{') {
    const close = c === '[' ? ']' : '}';
    const list: unknown[] = [];
    const dict: Record<string, unknown> = {};
    for (at.i++, skip(); s[at.i] !== close; skip()) {
      if (c === '[') list.push(readElement(s, at, ',]'));
      else {
        const colon = s.indexOf(':', at.i);
        if (colon < 0) throw new Error(`no ':' in ${s}`);
        const key = s.slice(at.i, colon).trim();
        at.i = colon + 1;
        dict[key] = readElement(s, at, ',}');
      }
      skip();
      if (s[at.i] === ',') at.i++;
      else if (s[at.i] !== close) throw new Error(`expected '${close}' in ${s}`);
    }
    at.i++;
    return c === '[' ? list : dict;
  }
  if (c === "'" || c === '"') {
    let out = '';
    for (at.i++; at.i < s.length && s[at.i] !== c; at.i++) out += s[at.i] === '\\' ? s[++at.i] : s[at.i];
    if (at.i++ >= s.length) throw new Error(`unclosed quote in ${s}`);
    return out;
  }
  const start = at.i;
  for (let depth = 0; at.i < s.length && (depth > 0 || !stops.includes(s[at.i])); at.i++) {
    if (s.startsWith('${', at.i)) depth++;
    else if (s[at.i] === '}') depth--;
  }
  return primitive(s.slice(start, at.i).trim());
}

/**
 * An override's value, or a sweep's values (`1,2,3`, `choice(...)`, `range(...)`), of which one run takes the first
 * (Hydra docs, 'Extended Override syntax'). Other functions (`interval`, `glob`) throw: there is no first value.
 */
export function overrideValues(text: string): { values: unknown[]; sweep: boolean } {
  const fn = /^\s*([A-Za-z_]\w*)\(([\s\S]*)\)\s*$/.exec(text);
  if (fn) {
    const args = overrideValues(fn[2]).values;
    if (fn[1] === 'range') return { values: args.length === 1 ? [0] : args.slice(0, 1), sweep: true };
    if (fn[1] === 'choice' || fn[1] === 'shuffle') return { values: args, sweep: true };
    if (fn[1] === 'sort') return { values: [...args].sort(), sweep: args.length > 1 };
    const cast = { int: (v: unknown) => Math.trunc(Number(v)), float: Number, str: String, bool: Boolean }[fn[1]];
    if (!cast) throw new Error(`${fn[1]}() is not modelled`);
    return { values: [cast(args[0])], sweep: false };
  }
  const at = { i: 0 };
  const values: unknown[] = [readElement(text, at, ',')];
  while (text[at.i] === ',' && ++at.i) values.push(readElement(text, at, ','));
  if (at.i < text.length) throw new Error(`unexpected '${text.slice(at.i)}'`);
  return { values, sweep: values.length > 1 };
}
