/** Reading and writing the versioned profile JSON (src/protocol/profile.ts). */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PROFILE_FORMAT, PROFILE_VERSION, type ProfileFile } from '../protocol/profile';

export class ProfileFormatError extends Error {
  override name = 'ProfileFormatError';
}

/** Parses and validates a profile; a foreign or newer file is a clear error, never a crash later. */
export function loadProfile(text: string): ProfileFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ProfileFormatError(`not a profile: invalid JSON (${(err as Error).message.split('\n')[0]})`);
  }
  const p = data as Partial<ProfileFile>;
  if (!p || typeof p !== 'object' || p.format !== PROFILE_FORMAT) {
    throw new ProfileFormatError(`not a WAP profile (format is ${JSON.stringify((p as { format?: unknown })?.format ?? null)}, expected "${PROFILE_FORMAT}")`);
  }
  if (typeof p.version !== 'number' || !Number.isInteger(p.version)) throw new ProfileFormatError('profile has no integer version');
  if (p.version > PROFILE_VERSION) {
    throw new ProfileFormatError(`profile version ${p.version} is newer than this WAP understands (${PROFILE_VERSION}); update WAP or re-run 'wap profile'`);
  }
  if (!Array.isArray(p.devices) || !Array.isArray(p.layers)) throw new ProfileFormatError('profile is missing its devices or layers list');
  for (const [i, l] of p.layers.entries()) {
    const ok = l && typeof l.layer === 'string' && typeof l.forwardMs === 'number' && typeof l.backwardMs === 'number' && typeof l.device === 'number';
    if (!ok) throw new ProfileFormatError(`profile layer entry ${i} is malformed`);
    if (!p.devices.some((d) => d.index === l.device)) throw new ProfileFormatError(`profile layer ${l.layer} names unknown device ${l.device}`);
  }
  return { links: [], warnings: [], ...p } as ProfileFile;
}

/** Atomic write: temp file, then rename. */
export function writeProfile(path: string, profile: ProfileFile): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(profile, null, 2)}\n`);
  renameSync(tmp, path);
}
