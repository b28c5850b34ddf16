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
