/**
 * `wap.sequenceLengths`: a plan of a sequence model is also priced on the training data's own lengths
 * (planner/lengths). Whatever goes wrong (no such file, a malformed histogram, a model whose length is fixed in
 * its code) becomes a warning on the plan; the plan itself stands.
 */
import type { AnalyzedModel } from '../core/ir';
import { lengthMix, LengthMixError, microBatchOf, parseBatching, parseLengthHistogram, pinsOfSetup, planModelAsync, priceOverLengths, type ClusterSpec } from '../planner';
import type { PlanOutcome } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import type { WapSettings } from './settings';

export interface LengthMixInputs {
  settings: WapSettings;
  options: PlanOptions;
  cluster: ClusterSpec;
  /** Whether the plan used measured layer times (measured at one length only). */
  measured: boolean;
  /** The model read again at `tokens` per sequence; undefined when it is not found there. */
  modelAt: (tokens: number) => AnalyzedModel | undefined;
  readFile: (path: string) => string;
}

/** The settings' part of a plan's identity: a plan is current only for the lengths it was priced on. */
export function lengthMixKey(s: WapSettings): string {
  return s.sequenceLengths ? `${s.sequenceLengths}|${s.batching}|${s.padMultiple}` : '';
}

/** Sets `outcome.lengthMix`, or adds a diagnostic saying why it could not. */
export async function addLengthMixFromSettings(outcome: PlanOutcome, inputs: LengthMixInputs): Promise<void> {
  const { settings } = inputs;
  if (!settings.sequenceLengths || !outcome.feasible) return;
  const warn = (message: string) => void outcome.diagnostics.push({ severity: 'warning', message: `wap.sequenceLengths: ${message}` });
  const tokens = outcome.sequence?.tokens;
  if (tokens === undefined) return void outcome.diagnostics.push({ severity: 'info', message: `wap.sequenceLengths applies to sequence models; ${outcome.model} takes no sequence length` });
  if (inputs.measured) return warn('not applied: the layer times were measured at one length, and other lengths would be priced analytically');
  let json: unknown;
  try {
    json = JSON.parse(inputs.readFile(settings.sequenceLengths));
  } catch (err) {
    return warn(`cannot read '${settings.sequenceLengths}' as JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  try {
    const histogram = parseLengthHistogram(json);
    const batching = parseBatching(settings.batching, settings.padMultiple);
    const mix = lengthMix(histogram, batching, microBatchOf(outcome), tokens);
    const setup = outcome.plan.setup;
    const pinned: PlanOptions = { ...inputs.options, gpus: outcome.plan.gpus, ...(setup ? { pins: pinsOfSetup(setup) } : {}) };
    outcome.lengthMix = await priceOverLengths(outcome, mix, batching, async (t) => {
      const model = inputs.modelAt(t);
      if (!model) throw new LengthMixError(`${outcome.model} is not found when the file is read at ${t} tokens`);
      return planModelAsync(model, inputs.cluster, pinned);
    }, settings.sequenceLengths);
  } catch (err) {
    if (err instanceof LengthMixError) return warn(err.message);
    throw err;
  }
}
