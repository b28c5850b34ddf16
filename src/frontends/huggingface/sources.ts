/**
 * Where a Hugging Face config comes from on disk, never the network:
 * `from_pretrained("./folder")` reads folder/config.json (relative to the
 * file, then each workspace root); `from_pretrained("org/name")` reads the
 * local hub cache (HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub,
 * ~/.cache/huggingface/hub; models--org--name/snapshots/<rev>/config.json,
 * preferring the revision refs/main points at). A config that is not on disk
 * comes back as an error naming every place looked in and how to fetch it.
 */
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { readSource, statKind } from '../imports/sourceFiles';
import type { HfConfig } from './configs';

export type ConfigLookup = { config: HfConfig; path: string } | { error: string };

let searchRoots: string[] = [];

/** Workspace folders to resolve relative model folders against (the server sets them; the CLI uses the current directory). */
export function setHfSearchRoots(roots: readonly string[]): void {
  searchRoots = [...roots];
}

// The import room's reader: cached per modification time and size-capped, so a from_pretrained call
// re-analysed on every keystroke costs one stat, not a read and parse of the config each time.
const isFile = (p: string): boolean => statKind(p) === 'file';

function readConfig(path: string): ConfigLookup {
  const read = readSource(path);
  if ('why' in read) return { error: `cannot read config: ${read.why}` };
  const text = read.text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: `${path} is not a JSON object` };
    return { config: parsed as HfConfig, path };
  } catch (e) {
    return { error: `${path} is not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

export function hubCacheDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  if (env.HF_HUB_CACHE) dirs.push(env.HF_HUB_CACHE);
  if (env.HUGGINGFACE_HUB_CACHE) dirs.push(env.HUGGINGFACE_HUB_CACHE);
  if (env.HF_HOME) dirs.push(join(env.HF_HOME, 'hub'));
  if (env.XDG_CACHE_HOME) dirs.push(join(env.XDG_CACHE_HOME, 'huggingface', 'hub'));
  dirs.push(join(env.HOME || homedir(), '.cache', 'huggingface', 'hub'));
  return [...new Set(dirs)];
}

/** The snapshot config.json of a cached repo: refs/main's revision first, then any snapshot that has one. */
function cachedConfig(cacheDir: string, repoId: string): string | undefined {
  const repoDir = join(cacheDir, `models--${repoId.replace(/\//g, '--')}`);
  const snapshots = join(repoDir, 'snapshots');
  const ref = readSource(join(repoDir, 'refs', 'main'));
  const main = 'why' in ref ? '' : ref.text.trim();
  if (main && isFile(join(snapshots, main, 'config.json'))) return join(snapshots, main, 'config.json');
  try {
    for (const rev of readdirSync(snapshots).sort()) if (isFile(join(snapshots, rev, 'config.json'))) return join(snapshots, rev, 'config.json');
  } catch {
    return undefined;
  }
  return undefined;
}

const HUB_ID = /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/;

/**
 * The config a `from_pretrained(ref)` call would load. `fromFile` is the Python
 * file making the call (relative folders are resolved against its folder first).
 */
export function findPretrainedConfig(ref: string, fromFile: string | undefined, env: NodeJS.ProcessEnv = process.env): ConfigLookup {
  const looked: string[] = [];
  const bases = [...(fromFile ? [dirname(resolve(fromFile))] : []), ...searchRoots, process.cwd()];
  const candidates = isAbsolute(ref) ? [ref] : [...new Set(bases.map((b) => resolve(b, ref.replace(/^~(?=\/|$)/, env.HOME || homedir()))))];
  for (const c of candidates) {
    const file = c.endsWith('.json') ? c : join(c, 'config.json');
    looked.push(file);
    if (isFile(file)) return readConfig(file);
  }
  const local = ref.startsWith('.') || ref.startsWith('/') || ref.startsWith('~') || ref.endsWith('.json');
  if (!local && HUB_ID.test(ref)) {
    for (const dir of hubCacheDirs(env)) {
      looked.push(join(dir, `models--${ref.replace(/\//g, '--')}`, 'snapshots', '*', 'config.json'));
      if (statKind(dir) !== 'dir') continue;
      const found = cachedConfig(dir, ref);
      if (found) return readConfig(found);
    }
    return {
      error:
        `the config of '${ref}' is not on disk (WAP never downloads). Looked in: ${looked.join(', ')}. ` +
        `Fetch it with \`huggingface-cli download ${ref} config.json\`, or point from_pretrained at a folder holding its config.json.`,
    };
  }
  return { error: `no config.json for '${ref}'. Looked in: ${looked.join(', ')}.` };
}

/**
 * Why no model comes of a config that names one (a recipe's `model_name_or_path`, axolotl's `base_model`): the lookup's
 * own words (where it looked, how to fetch the file), for the "no model" message.
 */
export function namedModelNotFound(named: { ref: string; key: string }, fromFile: string): string {
  const found = findPretrainedConfig(named.ref, fromFile);
  return `it names its model as ${named.key} ${named.ref}, and ${'error' in found ? found.error : 'that config is on disk but no script of yours builds the model'}`;
}

/** The path of the config.json `from_pretrained(ref)` would load, or undefined when it is not on disk. */
export function pretrainedConfigPath(ref: string, fromFile: string | undefined): string | undefined {
  const found = findPretrainedConfig(ref, fromFile);
  return 'path' in found ? found.path : undefined;
}
