/**
 * `--seq-lengths FILE`, `--batching B`, `--pad-multiple N`: the plan's throughput on the data's own sequence
 * lengths. The plan is made at the model's length; each other length the data's batches run at is planned again
 * with the chosen configuration pinned (planner/lengths).
 */
import type { PlanOutcome, PlanReport } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { lengthMix, LengthMixError, microBatchOf, parseBatching, parseLengthHistogram, pinsOfSetup, priceOverLengths, type Batching, type LengthHistogram } from '../planner/index';
import { positiveInt } from './args';
import { CliError } from './cliError';
import { readTextFile } from './files';

export const LENGTH_MIX_FLAGS = {
  'seq-lengths': { type: 'string' },
  batching: { type: 'string' },
  'pad-multiple': { type: 'string' },
} as const;

export const LENGTH_MIX_HELP = `  --seq-lengths FILE    the data's sequence lengths, JSON {"counts": [c1, c2, ...]} (c[i]: sequences of
                        i+1 tokens) or {"lengths": {"37": 120, ...}}: adds the throughput on them
  --batching B          with --seq-lengths: longest (default: each batch padded to its longest, as
                        DataCollatorWithPadding) | bins:W (length bins of W tokens, as LDDL) | padded
  --pad-multiple N      with --seq-lengths: padded lengths rounded up to a multiple of N (default 1;
                        pad_to_multiple_of, LDDL's 8)`;

export interface LengthMixRequest {
  path: string;
  histogram: LengthHistogram;
  batching: Batching;
}

type LengthMixFlagValues = { 'seq-lengths'?: string; batching?: string; 'pad-multiple'?: string; input?: string; profile?: string; measure?: boolean };

/** The request the flags make, or undefined without --seq-lengths; every mistake is a CliError naming the flag. */
export function lengthMixRequestFrom(v: LengthMixFlagValues): LengthMixRequest | undefined {
  const path = v['seq-lengths'];
  if (path === undefined) {
    const stray = (['batching', 'pad-multiple'] as const).find((f) => v[f] !== undefined);
    if (stray) throw new CliError(`--${stray} applies only with --seq-lengths`);
    return undefined;
  }
  // The other lengths are planned by reading the model again at each; a shape given by --input would win over them.
  if (v.input !== undefined) throw new CliError('--seq-lengths plans the model at other lengths: give its length with --seq-len or in the code, not --input');
  // Measured layer times hold for the length they were measured at only.
  if (v.profile !== undefined || v.measure) throw new CliError('--seq-lengths prices other lengths analytically and cannot be combined with measured layer times (--profile, --measure)');
  let batching: Batching;
  try {
    batching = parseBatching(v.batching ?? 'longest', positiveInt('pad-multiple', v['pad-multiple']) ?? 1);
  } catch (err) {
    throw new CliError(`--batching: ${(err as Error).message}`);
  }
  const text = readTextFile(path, 'sequence-length histogram');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--seq-lengths '${path}' is not JSON: ${(err as Error).message}`);
  }
  try {
    return { path, histogram: parseLengthHistogram(json), batching };
  } catch (err) {
    throw new CliError(`--seq-lengths '${path}': ${(err as Error).message}`);
  }
}

/**
 * Sets `outcome.lengthMix`. `modelPlanAt(tokens, options)` plans the same model read at `tokens` per sequence;
 * the options it gets pin the outcome's GPU count and configuration.
 */
export async function addLengthMix(outcome: PlanReport, request: LengthMixRequest, options: PlanOptions, modelPlanAt: (tokens: number, options: PlanOptions) => Promise<PlanOutcome>): Promise<void> {
  const tokens = outcome.sequence?.tokens;
  if (tokens === undefined) throw new CliError(`--seq-lengths applies to sequence models; ${outcome.model} takes no sequence length`);
  const setup = outcome.plan.setup;
  const pinned: PlanOptions = { ...options, gpus: outcome.plan.gpus, ...(setup ? { pins: pinsOfSetup(setup) } : {}) };
  try {
    const mix = lengthMix(request.histogram, request.batching, microBatchOf(outcome), tokens);
    outcome.lengthMix = await priceOverLengths(outcome, mix, request.batching, (t) => modelPlanAt(t, pinned), request.path);
  } catch (err) {
    if (err instanceof LengthMixError) throw new CliError(`--seq-lengths: ${err.message}`);
    throw err;
  }
}
