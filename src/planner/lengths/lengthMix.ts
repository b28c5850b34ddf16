/**
 * Variable-length data: how long the batches a GPU runs really are.
 *
 * A plan is made at one sequence length, the longest the model takes. Real text is shorter: in the Wikipedia
 * set BERT pre-trains on, over half of the tokens of 512-token batches are padding (Krell et al., "Efficient
 * Sequence Packing without Cross-contamination", 2021). What a batch costs depends on how it is padded:
 * - `padded`: every sequence to the model's length (a fixed-shape pipeline, BERT's original TFRecords);
 * - `longest`: each batch to its longest sequence (Hugging Face's DataCollatorWithPadding);
 * - `bins`: sequences grouped by length into bins of `width` tokens, each batch drawn from one bin and padded to
 *   its longest (NVIDIA LDDL's sequence binning, lddl/torch/bert.py).
 * Each may round the padded length up to a multiple (`align`: LDDL's sequence_length_alignment, 8 by default;
 * transformers' pad_to_multiple_of).
 *
 * For a batch of B sequences drawn at random from a length distribution with CDF F, the longest is ≤ x with
 * probability F(x)^B, so the padded length's distribution follows from the histogram alone. The mix is then
 * folded into a few groups, each priced by one plan at its mean padded length.
 */

/** How many sequences have each length (tokens, specials included). */
export interface LengthHistogram {
  /** Ascending, distinct lengths with a positive count. */
  bins: ReadonlyArray<{ tokens: number; count: number }>;
}

export type Batching = { kind: 'padded' } | { kind: 'longest'; align: number } | { kind: 'bins'; width: number; align: number };

export interface LengthGroup {
  /** The padded length this group is priced at (a multiple of the alignment, at most the model's length). */
  tokens: number;
  /** Its share of micro-batches. */
  share: number;
}

export interface LengthMix {
  groups: LengthGroup[];
  sequences: number;
  /** Real tokens per sequence, after truncation to the model's length. */
  meanTokens: number;
  /** Tokens per sequence as run, padding included. */
  meanPaddedTokens: number;
  /** Of the tokens run, the share that is padding. */
  paddingFraction: number;
  /** Of the sequences, the share longer than the model's length (truncated to it). */
  truncatedFraction: number;
}

export class LengthMixError extends Error {}

/**
 * A histogram from JSON: `{"counts": [c1, c2, …]}` (counts[i] sequences of i+1 tokens, as Graphcore's packing
 * code writes it) or `{"lengths": {"37": 120, …}}`. Anything else says what is wrong.
 */
export function parseLengthHistogram(json: unknown): LengthHistogram {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new LengthMixError('a length histogram is an object with "counts" (an array) or "lengths" (tokens → count)');
  const o = json as { counts?: unknown; lengths?: unknown };
  const pairs: Array<[number, unknown]> = [];
  if (Array.isArray(o.counts)) o.counts.forEach((c, i) => pairs.push([i + 1, c]));
  else if (typeof o.lengths === 'object' && o.lengths !== null && !Array.isArray(o.lengths)) {
    for (const [k, c] of Object.entries(o.lengths)) {
      if (!/^[1-9]\d*$/.test(k)) throw new LengthMixError(`"lengths" key '${k}' is not a positive whole number of tokens`);
      pairs.push([Number(k), c]);
    }
  } else throw new LengthMixError('a length histogram needs "counts" (an array, counts[i] = sequences of i+1 tokens) or "lengths" (an object, tokens → count)');
  const bins: Array<{ tokens: number; count: number }> = [];
  for (const [tokens, c] of pairs) {
    if (typeof c !== 'number' || !Number.isFinite(c) || c < 0) throw new LengthMixError(`the count for ${tokens} tokens must be a number ≥ 0, got ${JSON.stringify(c)}`);
    if (c > 0) bins.push({ tokens, count: c });
  }
  if (bins.length === 0) throw new LengthMixError('the length histogram counts no sequences');
  bins.sort((a, b) => a.tokens - b.tokens);
  return { bins };
}

/** `padded`, `longest` or `bins:W`; `align` rounds each padded length up to a multiple (1: none). */
export function parseBatching(text: string, align = 1): Batching {
  if (!Number.isInteger(align) || align < 1) throw new LengthMixError(`the padding multiple must be a positive integer, got ${align}`);
  if (text === 'padded') return { kind: 'padded' };
  if (text === 'longest') return { kind: 'longest', align };
  const m = /^bins:([1-9]\d*)$/.exec(text);
  if (m) return { kind: 'bins', width: Number(m[1]), align };
  throw new LengthMixError(`batching must be padded, longest or bins:W (W tokens a bin), got '${text}'`);
}

export function describeBatching(b: Batching): string {
  const aligned = b.kind !== 'padded' && b.align > 1 ? `, rounded up to a multiple of ${b.align}` : '';
  if (b.kind === 'padded') return 'every sequence padded to the model length';
  if (b.kind === 'longest') return `each batch padded to its longest sequence${aligned}`;
  return `batches drawn from ${b.width}-token length bins, each padded to its longest${aligned}`;
}

/** Below this share of micro-batches a length group is not planned on its own. */
const RARE_GROUP = 1e-3;

const roundUp = (x: number, m: number) => Math.ceil(x / m) * m;

/**
 * The padded lengths micro-batches of `microBatch` sequences run at, folded into at most `maxGroups` groups.
 * `modelTokens`: the length the model was planned at; longer sequences are truncated to it.
 */
export function lengthMix(histogram: LengthHistogram, batching: Batching, microBatch: number, modelTokens: number, maxGroups = 8): LengthMix {
  if (!Number.isInteger(microBatch) || microBatch < 1) throw new LengthMixError(`micro-batch must be a positive integer, got ${microBatch}`);
  const clipped = truncate(histogram.bins, modelTokens);
  const sequences = clipped.reduce((s, b) => s + b.count, 0);
  const truncated = histogram.bins.filter((b) => b.tokens > modelTokens).reduce((s, b) => s + b.count, 0);
  const meanTokens = clipped.reduce((s, b) => s + b.tokens * b.count, 0) / sequences;
  const padded = paddedLengthShares(clipped, batching, microBatch, modelTokens, sequences);
  const meanPaddedTokens = [...padded].reduce((s, [tokens, share]) => s + tokens * share, 0);
  return {
    groups: fold(padded, modelTokens, batching.kind === 'padded' ? 1 : batching.align, maxGroups),
    sequences,
    meanTokens,
    meanPaddedTokens,
    paddingFraction: 1 - meanTokens / meanPaddedTokens,
    truncatedFraction: truncated / (sequences || 1),
  };
}

function truncate(bins: LengthHistogram['bins'], modelTokens: number): Array<{ tokens: number; count: number }> {
  const out = bins.filter((b) => b.tokens < modelTokens).map((b) => ({ ...b }));
  const atModel = bins.filter((b) => b.tokens >= modelTokens).reduce((s, b) => s + b.count, 0);
  if (atModel > 0) out.push({ tokens: modelTokens, count: atModel });
  return out;
}

/** Padded length → share of micro-batches. */
function paddedLengthShares(bins: Array<{ tokens: number; count: number }>, batching: Batching, microBatch: number, modelTokens: number, sequences: number): Map<number, number> {
  const shares = new Map<number, number>();
  if (batching.kind === 'padded') return shares.set(modelTokens, 1);
  const width = batching.kind === 'bins' ? batching.width : modelTokens;
  const byBin = new Map<number, Array<{ tokens: number; count: number }>>();
  for (const b of bins) {
    const id = Math.ceil(b.tokens / width);
    byBin.set(id, [...(byBin.get(id) ?? []), b]);
  }
  for (const members of byBin.values()) {
    const inBin = members.reduce((s, b) => s + b.count, 0);
    // Batches come from a bin in proportion to the sequences in it (a fixed batch size empties each bin at its own pace).
    const weight = inBin / sequences;
    let cumulative = 0;
    let below = 0; // P(longest ≤ the previous padded length)
    let i = 0;
    while (i < members.length) {
      // The padded length of a batch whose longest sequence is members[i]: rounded up, at most the model's length.
      const padTo = Math.min(roundUp(members[i]!.tokens, batching.align), modelTokens);
      while (i < members.length && Math.min(roundUp(members[i]!.tokens, batching.align), modelTokens) === padTo) cumulative += members[i++]!.count;
      const atMost = (cumulative / inBin) ** microBatch;
      shares.set(padTo, (shares.get(padTo) ?? 0) + weight * (atMost - below));
      below = atMost;
    }
  }
  return shares;
}

/**
 * Folds padded lengths into ≤ maxGroups groups of equal token range; each group is priced at its share-weighted
 * mean length, rounded up to the alignment. Step time is close to linear in length inside a narrow range (the
 * GEMMs are; attention's quadratic part is a few percent of a BERT-size layer at 512 tokens).
 */
function fold(shares: Map<number, number>, modelTokens: number, align: number, maxGroups: number): LengthGroup[] {
  const span = roundUp(Math.ceil(modelTokens / maxGroups), align);
  const groups = new Map<number, { share: number; weighted: number }>();
  for (const [tokens, share] of shares) {
    if (share <= 0) continue;
    const id = Math.ceil(tokens / span);
    const g = groups.get(id) ?? { share: 0, weighted: 0 };
    g.share += share;
    g.weighted += share * tokens;
    groups.set(id, g);
  }
  const out: LengthGroup[] = [];
  // A group too rare to be worth a plan of its own is priced with the next longer one (an overestimate of its cost).
  let carried = 0;
  const ordered = [...groups.entries()].sort((a, b) => a[0] - b[0]);
  ordered.forEach(([, g], i) => {
    const share = g.share + carried;
    if (g.share < RARE_GROUP && i < ordered.length - 1) return void (carried = share);
    carried = 0;
    out.push({ tokens: Math.min(roundUp(g.weighted / g.share, align), modelTokens), share });
  });
  return out;
}
