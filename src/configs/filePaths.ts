/**
 * Path arithmetic on the paths configs write, without node:path: the config room stays pure and runs the same on
 * the LSP server, the CLI and in tests. Both separators are accepted, as users write either.
 */

/** The folder of a path ('.' for a bare name). */
export const dirOf = (p: string): string => (/[\\/]/.test(p) ? p.replace(/[\\/][^\\/]*$/, '') : '.');

/** The last component of a path. */
export const baseOf = (p: string): string => p.replace(/^.*[\\/]/, '');

/** `rel` from `dir`; an absolute `rel` (/x, C:\x) stands as written. */
export const joinPath = (dir: string, rel: string): string => (isAbsolutePath(rel) ? rel : `${dir}/${rel.replace(/^\.\//, '')}`);

export const isAbsolutePath = (p: string): boolean => /^([\\/]|[A-Za-z]:)/.test(p);

/** `a/./b`, `a/x/../b` → `a/b`: paths are written relative to the file that names them. */
export function normalisePath(path: string): string {
  const out: string[] = [];
  for (const part of path.split(/[\\/]/)) {
    if (part === '.' || (part === '' && out.length > 0)) continue;
    if (part === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(part);
  }
  return out.join('/');
}
