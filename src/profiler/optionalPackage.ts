/**
 * Finds an optional native package (tfjs-node, tfjs-node-gpu) that is never
 * bundled. A user installs it beside WAP, globally (`npm install -g`), or in a
 * folder named by WAP_NODE_PATH. Inside VS Code `process.execPath` is the
 * editor's own binary, so the usual global npm roots are listed explicitly.
 *
 * `createRequire` (not `eval('require')`) keeps the bundler quiet and makes
 * resolution independent of where the bundle sits.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, parse } from 'node:path';

export interface FoundPackage {
  name: string;
  /** The package's folder. */
  dir: string;
  /** The file `require` loads (its main entry). */
  entry: string;
  version: string;
  /** Which search place found it: 'beside WAP', 'WAP_NODE_PATH', 'global npm root'. */
  via: string;
}

export interface PackageLookup {
  found?: FoundPackage;
  /** Every place looked in, in order, as a user would read it. */
  searched: string[];
}

const localRequire = (): NodeRequire => createRequire(__filename);

/** The folders that are global npm roots on this machine, in search order; duplicates and missing HOME/APPDATA dropped. */
export function globalNpmRoots(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  const roots: string[] = [];
  if (env.NPM_CONFIG_PREFIX) roots.push(platform === 'win32' ? join(env.NPM_CONFIG_PREFIX, 'node_modules') : join(env.NPM_CONFIG_PREFIX, 'lib', 'node_modules'));
  roots.push(join(dirname(process.execPath), '..', 'lib', 'node_modules'));
  if (platform === 'win32') {
    // Windows' npm puts the global prefix beside node.exe, and per-user installs under %APPDATA%.
    roots.push(join(dirname(process.execPath), 'node_modules'));
    if (env.APPDATA) roots.push(join(env.APPDATA, 'npm', 'node_modules'));
  } else {
    roots.push('/usr/local/lib/node_modules', '/usr/lib/node_modules');
  }
  const home = env.HOME ?? env.USERPROFILE;
  if (home) roots.push(join(home, '.npm-global', 'lib', 'node_modules'));
  return [...new Set(roots)];
}

/** WAP_NODE_PATH: folders like NODE_PATH's (holding packages), or project folders holding a node_modules. */
export function wapNodePath(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.WAP_NODE_PATH ?? '').split(delimiter).map((s) => s.trim()).filter(Boolean);
}

function versionOf(dir: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Walks up from a resolved entry file to the folder whose package.json names `name`. */
function packageDirOf(entry: string, name: string): string | undefined {
  let dir = dirname(entry);
  const top = parse(dir).root;
  while (dir !== top) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name) return dir;
      } catch {
        /* a broken manifest on the way up: keep walking */
      }
    }
    dir = dirname(dir);
  }
  return undefined;
}

/** A package folder at `dir`, resolved by its absolute path (its own package.json main), or undefined. */
function atFolder(dir: string, name: string, via: string): FoundPackage | undefined {
  if (!existsSync(join(dir, 'package.json'))) return undefined;
  try {
    const entry = localRequire().resolve(dir);
    return { name, dir, entry, version: versionOf(dir), via };
  } catch {
    return undefined;
  }
}

/** Looks for `name` beside WAP, then in WAP_NODE_PATH, then in the global npm roots. Never throws. */
export function locatePackage(name: string, env: NodeJS.ProcessEnv = process.env): PackageLookup {
  const searched: string[] = [];
  searched.push(`node_modules folders above ${dirname(__filename)}`);
  try {
    const entry = localRequire().resolve(name);
    const dir = packageDirOf(entry, name) ?? dirname(entry);
    return { found: { name, dir, entry, version: versionOf(dir), via: 'beside WAP' }, searched };
  } catch {
    /* not installed with WAP: look further */
  }
  const extra = wapNodePath(env);
  if (extra.length === 0) searched.push('WAP_NODE_PATH (not set)');
  for (const folder of extra) {
    for (const dir of [join(folder, name), join(folder, 'node_modules', name)]) {
      const found = atFolder(dir, name, 'WAP_NODE_PATH');
      if (found) return { found, searched };
    }
    searched.push(`${folder} (WAP_NODE_PATH)`);
  }
  for (const root of globalNpmRoots(env)) {
    const found = atFolder(join(root, name), name, 'global npm root');
    if (found) return { found, searched };
    searched.push(root);
  }
  return { searched };
}

/** Loads a located package by its absolute entry path; its own dependencies resolve from its folder. */
export function requirePackage(found: FoundPackage): unknown {
  return localRequire()(found.entry);
}

/** One line for a user: where it was found, or where we looked and how to install it. */
export function describeLookup(name: string, lookup: PackageLookup, installHint: string): string {
  if (lookup.found) return `${name} ${lookup.found.version} at ${lookup.found.dir} (${lookup.found.via})`;
  return `${name} is not installed (${installHint}); looked in: ${lookup.searched.join('; ')}. Install it with \`npm install -g ${name}@4.22.0\` or set WAP_NODE_PATH to the folder holding it`;
}
