/**
 * A launcher's process counts as the launch script writes them (`--nproc_per_node 8`, `--num_gpus=$NGPU`,
 * `--nproc_per_node=${2:-4}`), for the readers that compare them with the plan (launchScripts.ts for torchrun,
 * deepspeedLaunch.ts for DeepSpeed's launcher), and what each reading that is not a plain number says:
 * - one process per GPU of the machine (torchrun's `gpu`/`auto`, deepspeed without --num_gpus): the plan's machines
 *   count it, and the finding says how many that is;
 * - the default of a `${2:-4}` the script never sets: read, and said, since the run may pass another;
 * - a value the shell computes, or processes on CPUs: not compared, and said.
 */
import type { PlanReport } from '../protocol/plan';
import { planTarget } from './compare';
import { baseOf } from './filePaths';
import { resolveReference, unquote, type Assignment } from './shellWords';
import { MalformedConfig, type ConfigFinding, type ConfigFormat, type ConfigValue, type TextEdit, type TextRange } from './types';

export interface CountReading {
  /** The count, where it is a number. */
  value?: ConfigValue<number>;
  /** One process per GPU of each machine: what says so (`--nproc_per_node=gpu`). */
  perGpu?: string;
  /** The `${…:-default}` whose default the count is. */
  defaultOf?: string;
  /** Why it is no count WAP compares: computed when the script runs, CPU processes, an elastic range. */
  unread?: string;
  /** The value as the shell hands it to the launcher. */
  written: string;
  range: TextRange;
}

const at = (start: number, end: number, newText: string): TextEdit[] => [{ start, end, newText }];

/** Why a `$…` value has no one value in the script. */
function unresolvedWhy(value: string, assignments: Assignment[]): string {
  const name = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(value)?.[1];
  if (!name) return 'is computed when the script runs';
  const sets = assignments.filter((a) => a.name === name).length;
  return sets > 1 ? `is set in ${sets} places in the script, and the run takes one` : sets === 1 ? 'is computed when the script runs' : 'comes from the environment the script runs in';
}

/**
 * An option's count as written or through the script's one assignment of the variable. `perGpuWords` are the values
 * that mean one process per GPU; `cpuWords` those that start processes on something else; `elastic`: a min:max range
 * is allowed (and counts when both ends are one size). Anything else is malformed.
 */
export function readCount(option: string, raw: string, start: number, assignments: Assignment[], words: { perGpu?: ReadonlySet<string>; other?: ReadonlySet<string>; elastic?: boolean } = {}): CountReading {
  let v: { value: string; start: number; end: number; defaultOf?: string } = unquote(raw, start);
  if (v.value.startsWith('$')) {
    const resolved = resolveReference(v.value, v.start, assignments);
    if (!resolved) return { unread: `${option} ${v.value} ${unresolvedWhy(v.value, assignments)}`, written: v.value, range: { start: v.start, end: v.end } };
    v = resolved;
  }
  const text = v.value.trim();
  const defaultOf = v.defaultOf ? { defaultOf: v.defaultOf } : {};
  // Only the digits are the value: spaces inside the quotes are the user's and stay.
  const s = v.start + Math.max(0, v.value.indexOf(text));
  const e = s + text.length;
  const range = { start: s, end: e };
  const base = { range, written: text, ...defaultOf };
  if (/^\d+$/.test(text)) return { value: { value: Number(text), range, set: (n) => at(s, e, String(n)) }, ...base };
  if (words.perGpu?.has(text)) return { perGpu: `${option}=${text}`, ...base };
  if (words.other?.has(text)) return { unread: `${option}=${text} starts processes on ${text.toUpperCase()}s, not GPUs`, ...base };
  const elastic = words.elastic ? /^(\d+):(\d+)$/.exec(text) : null;
  if (elastic) {
    return elastic[1] === elastic[2]
      ? { value: { value: Number(elastic[1]), range, set: (n) => at(s, e, `${n}:${n}`) }, ...base }
      : { unread: `${option}=${text} is elastic: the machines that join decide`, ...base };
  }
  const choices = words.perGpu ? ` (or ${[...words.perGpu].join('/')})` : '';
  throw new MalformedConfig(`${option} must be a whole number${choices}, got '${text}'`, { start: v.start, end: v.end });
}

/** "--nproc_per_node=gpu starts one process per GPU of each machine: 8 on '8x H100 …'", where the plan's cluster says. */
export function perGpuFinding(format: ConfigFormat, said: string, range: TextRange, plan: PlanReport): ConfigFinding {
  const n = planTarget(plan).gpusPerNode;
  return {
    format, severity: 'info', code: 'processes-per-gpu', range,
    message: `${said} starts one process per GPU of each machine: ${n} on the machines of '${plan.cluster.name}', which the plan is compared with`,
  };
}

/** The count's default is what WAP read; the run may give another. */
export function defaultFinding(format: ConfigFormat, fileName: string, defaultOf: string, value: string, range: TextRange): ConfigFinding {
  const positional = /^\$\{(\d+)/.exec(defaultOf);
  const who = positional ? `it is ${baseOf(fileName)}'s argument ${positional[1]}` : `${baseOf(fileName)} does not set it`;
  return {
    format, severity: 'info', code: 'shell-default', range,
    message: `${defaultOf} is read at its default ${value}: ${who}, so a run may give another`,
  };
}

/** A count that is not compared, and why. */
export function unreadFinding(format: ConfigFormat, why: string, range: TextRange): ConfigFinding {
  return { format, severity: 'info', code: 'launch-count-unread', range, message: `${why}: WAP does not compare this launch's GPU count with the plan` };
}

/** The notes a reading carries (its default, why it is not counted); the per-GPU one needs the plan. */
export function readingNotes(format: ConfigFormat, fileName: string, reading: CountReading | undefined): ConfigFinding[] {
  if (!reading) return [];
  const out: ConfigFinding[] = [];
  if (reading.defaultOf) out.push(defaultFinding(format, fileName, reading.defaultOf, reading.written, reading.range));
  if (reading.unread) out.push(unreadFinding(format, reading.unread, reading.range));
  return out;
}
