/**
 * A config that hands its ZeRO stage and offload to a DeepSpeed JSON by path
 * (accelerate's `deepspeed_config_file`, the Trainer's `deepspeed="ds.json"`,
 * Lightning's `DeepSpeedStrategy(config="ds.json")`) states them there: the
 * setup is read from that file, so "your config" pins what the job really
 * runs. Before, such a config was read as ZeRO-0 without offload, whatever
 * the JSON said: a silent wrong comparison.
 *
 * The file owns the ZeRO stage and both offloads (DeepSpeed's default when it
 * does not say: stage 0, nothing offloaded); its precision and batch keys
 * count where they are numbers or bools, and "auto" leaves them to the
 * referring config, as the HF Trainer and accelerate fill them in. A file that
 * cannot be found or read leaves those dimensions to the search, and the
 * config's findings say so.
 *
 * A launch may name accelerate's own config instead (`accelerate launch
 * --config_file zero3.yaml`, ConfigLink.format 'accelerate'): its plugin
 * shards, read with its own deepspeed_config_file, and its num_processes is
 * the GPU count where the launch gives none.
 */
import type { Node } from 'jsonc-parser';
import type { Precision } from '../protocol/plan';
import { readAccelerateSetup } from './accelerateSetup';
import { deepspeedEnabled, readDeepspeedSetup } from './deepspeedSetup';
import { baseOf, dirOf, isAbsolutePath, joinPath } from './filePaths';
import { parseJsonConfig } from './jsonDoc';
import type { ConfigLink, SetupDim, StatedSetup } from './setup';
import type { FileAccess } from './types';
import { parseYamlConfig, readCount } from './yamlDoc';

/** How far above the config's folder a relative path is tried: the job is launched from the project root, usually a level or two up. */
const LAUNCH_DIR_LEVELS = 3;

/** Dimensions the DeepSpeed file always states (its defaults count); the rest only when the file gives a value. */
const OWNED = ['zeroStage', 'cpuOffload', 'paramOffload'] as const;
const WHEN_GIVEN = ['precision', 'microBatch', 'gradientAccumulation', 'globalBatch'] as const;

const SAID: Record<(typeof WHEN_GIVEN)[number], string> = { precision: 'precision', microBatch: 'micro-batch', gradientAccumulation: 'gradient accumulation', globalBatch: 'global batch' };

/**
 * transformers compares bf16.enabled with `bf16` and fp16.enabled with `fp16`, each only where the file gives a bool:
 * `"fp16": {"enabled": false}` beside `bf16=True` is no mismatch (the file has no bf16 section, so DeepSpeed trains
 * in fp32, which the file's precision then says).
 */
function precisionFlagsDisagree(root: Node, own: Precision): boolean {
  return (['bf16', 'fp16'] as const).some((flag) => {
    const said = deepspeedEnabled(root, flag);
    return typeof said === 'boolean' && said !== (own === flag);
  });
}

/** Where the file is: as written when absolute, else from the config's folder and then each folder above it. */
export function locateLinked(configPath: string, link: ConfigLink, files: FileAccess): { path: string; text: string } | undefined {
  const wanted = link.readFrom ?? link.path;
  if (isAbsolutePath(wanted)) {
    const text = files.read(wanted);
    return text === undefined ? undefined : { path: wanted, text };
  }
  let dir = dirOf(configPath);
  for (let level = 0; level <= LAUNCH_DIR_LEVELS; level++) {
    const path = joinPath(dir, wanted);
    const text = files.read(path);
    if (text !== undefined) return { path, text };
    if (!/[\\/]/.test(dir)) break;
    dir = dirOf(dir);
  }
  return undefined;
}

/** The setup with the dimensions the linked file states; unchanged when the config links nothing. */
export function withLinkedConfig(configPath: string, stated: StatedSetup, files: FileAccess | undefined): StatedSetup {
  const link = stated.link;
  if (!link) return stated;
  const found = files ? locateLinked(configPath, link, files) : undefined;
  if (!found) {
    const why = files ? `was not found as a readable file from ${baseOf(configPath)}'s folder or the ${LAUNCH_DIR_LEVELS} above it` : 'was not read';
    return unread(stated, link, `${link.key} ${link.path} ${why}`);
  }
  if (link.format === 'accelerate') return withAccelerateConfig(stated, link, found, files);
  let root: Node;
  try {
    root = parseJsonConfig(found.text);
  } catch (e) {
    return unread(stated, link, `${link.key} ${link.path} could not be read (${e instanceof Error ? e.message : String(e)})`);
  }
  const linked = readDeepspeedSetup(found.text, root);
  // Named as the config writes it: the reader knows where that is, and the finding sits on the reference.
  const source = link.path;
  // Ranges point at the reference: the findings are shown in this config, and the fix belongs in the other file.
  const moved = <T>(dim: SetupDim<T>): SetupDim<T> => ({ value: dim.value, stated: dim.stated, range: link.range, source, ...(dim.expressible ? { expressible: dim.expressible } : {}), ...(dim.matches ? { matches: dim.matches } : {}) });
  const out: StatedSetup = { ...stated, inexpressible: { ...stated.inexpressible } };
  for (const key of OWNED) {
    const dim = linked[key] as SetupDim<unknown> | undefined;
    if (dim) (out as unknown as Record<string, unknown>)[key] = moved(dim);
    else delete out[key];
  }
  const conflicts: NonNullable<StatedSetup['conflicts']> = [];
  for (const key of WHEN_GIVEN) {
    const dim = linked[key] as SetupDim<unknown> | undefined;
    if (!dim?.stated) continue;
    const own = stated[key] as SetupDim<unknown> | undefined;
    // The referrer's default counts as its value (transformers compares per_device_train_batch_size's 8 too).
    if (link.mustMatch && own && (key === 'precision' ? precisionFlagsDisagree(root, own.value as Precision) : own.value !== dim.value)) {
      conflicts.push({ range: own.stated ? own.range : link.range, message: `${stated.label} says ${SAID[key]} ${String(own.value)}${own.stated ? '' : ' (its default)'} and ${link.path} says ${String(dim.value)}: ${link.mustMatch} refuses to start until they agree (or the file says "auto")` });
    }
    (out as unknown as Record<string, unknown>)[key] = moved(dim);
  }
  if (conflicts.length) out.conflicts = [...(stated.conflicts ?? []), ...conflicts];
  // DeepSpeed runs the training: its collectives' timing, not the referrer's (frameworkTimings.ts); it reduces every
  // micro-step (unshardedAccumulation.ts), so the referrer's no_sync goes too.
  for (const key of ['weightGather', 'serialSync', 'unshardedAccumulation'] as const) {
    if (linked[key]) Object.assign(out, { [key]: { ...linked[key], why: `${link.path}: ${linked[key]!.why}` } });
    else delete out[key];
  }
  if (linked.inexpressible.paramOffload) out.inexpressible.paramOffload = linked.inexpressible.paramOffload;
  const notes = (linked.unmodelled ?? []).map((u) => ({ ...u, range: link.range, message: `${source}: ${u.message}` }));
  if (notes.length) out.unmodelled = [...(stated.unmodelled ?? []), ...notes];
  return out;
}

/**
 * accelerate's own config, named by the launch (`accelerate launch --config_file zero3.yaml`): the Trainer's
 * Accelerator takes its plugin, so its ZeRO stage, hybrid sharding and offloads are the run's, through its own
 * deepspeed_config_file too; its num_processes is the GPU count where the launch gives none.
 */
function withAccelerateConfig(stated: StatedSetup, link: ConfigLink, found: { path: string; text: string }, files: FileAccess | undefined): StatedSetup {
  let accelerate: StatedSetup;
  try {
    const doc = parseYamlConfig(found.text);
    accelerate = withLinkedConfig(found.path, readAccelerateSetup(found.text, doc, readCount(doc, 'num_processes')?.value), files);
  } catch (e) {
    return unread(stated, link, `${link.key} ${link.path} could not be read (${e instanceof Error ? e.message : String(e)})`);
  }
  const source = accelerate.zeroStage?.source ? `${link.path}, ${accelerate.zeroStage.source}` : link.path;
  const moved = <T>(dim: SetupDim<T>): SetupDim<T> => ({ value: dim.value, stated: dim.stated, range: link.range, source, ...(dim.expressible ? { expressible: dim.expressible } : {}), ...(dim.matches ? { matches: dim.matches } : {}) });
  const out: StatedSetup = { ...stated };
  for (const key of ['zeroStage', 'hybridShard', 'cpuOffload', 'paramOffload'] as const) {
    const dim = accelerate[key] as SetupDim<unknown> | undefined;
    if (dim) (out as unknown as Record<string, unknown>)[key] = moved(dim);
    else delete out[key];
  }
  if (out.world === undefined && accelerate.world !== undefined) Object.assign(out, { world: accelerate.world, worldFrom: link.path });
  // The launcher's plugin runs the training: its collectives' timing (frameworkTimings.ts), and its accumulation
  // unless the referrer's own arguments set sync_each_batch (unshardedAccumulation.ts).
  for (const key of ['weightGather', 'serialSync', 'unshardedAccumulation'] as const) {
    if (key === 'unshardedAccumulation' && stated.unshardedAccumulation?.syncEachBatch) continue;
    if (accelerate[key]) Object.assign(out, { [key]: { ...accelerate[key], why: `${link.path}: ${accelerate[key]!.why}` } });
    else delete out[key];
  }
  // A sharding plugin (DeepSpeed, FSDP) holds the 16-bit tensors its own way: the plain Trainer's autocast is not the run's.
  if (accelerate.zeroStage && accelerate.zeroStage.value !== 0) delete out.ampStyle;
  const notes = (accelerate.unmodelled ?? []).map((u) => ({ ...u, range: link.range, message: `${link.path}: ${u.message}` }));
  if (notes.length) out.unmodelled = [...(stated.unmodelled ?? []), ...notes];
  return out;
}

/** The linked dimensions stay unknown (the search chooses them), and the config's findings say why. */
function unread(stated: StatedSetup, link: ConfigLink, what: string): StatedSetup {
  const out: StatedSetup = { ...stated };
  for (const key of [...OWNED, 'hybridShard'] as const) delete out[key];
  out.unmodelled = [...(stated.unmodelled ?? []), {
    range: link.range, short: `${link.path} not read`,
    message: `${what}: the ZeRO stage and offload it sets are unknown to WAP, so this config's plan leaves them to the search`,
  }];
  return out;
}
