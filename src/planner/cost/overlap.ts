/**
 * Compute that runs beside a collective on the same GPU runs slower: NCCL's
 * kernels take SMs (one thread block per channel) and HBM bandwidth from it.
 * Lee et al., "Characterizing Compute-Communication Overlap in GPU-Accelerated
 * Distributed Deep Learning" (arXiv 2507.03114, 2025), measured GPT and Llama
 * training on A100, H100, MI250 and MI210: overlapped compute took 18.9%
 * longer on average than the same compute alone (up to 40%). Overlap still
 * wins over running them in turn (10.2% faster on average there), and here
 * too: compute only slows while a collective is in flight.
 *
 * Both simulators use the rule (the event engine per task, the block-stack
 * estimate and replay in closed form), so the two searches price overlap alike.
 */

/** How much longer compute takes while a collective runs beside it (Lee et al. 2025, mean over their runs). */
export const OVERLAPPED_COMPUTE_SLOWDOWN = 0.189;

/**
 * What a collective of `commMs` started with `computeMs` of compute adds to that compute's time: the compute runs at
 * 1/(1+s) of its speed while the collective is in flight. A collective that outlasts even the slowed compute exposes
 * its remainder; one that ends first costs the compute the work it slowed.
 */
export function overlapExtraMs(commMs: number, computeMs: number, slowdown = OVERLAPPED_COMPUTE_SLOWDOWN): number {
  if (commMs <= 0) return 0;
  if (computeMs <= 0) return commMs;
  if (commMs >= computeMs * (1 + slowdown)) return commMs - computeMs;
  return (commMs * slowdown) / (1 + slowdown);
}

/**
 * When `workMs` of compute started at `startMs` ends, given the spans in which collectives run on its GPU
 * (they may overlap one another): slowed by 1 + s inside them, full speed between.
 */
export function computeEndMs(startMs: number, workMs: number, busy: ReadonlyArray<readonly [number, number]>, slowdown = OVERLAPPED_COMPUTE_SLOWDOWN): number {
  if (workMs <= 0 || busy.length === 0) return startMs + Math.max(0, workMs);
  const spans = busy.filter(([, b]) => b > startMs).sort((x, y) => x[0] - y[0]);
  let t = startMs;
  let left = workMs;
  let i = 0;
  while (i < spans.length) {
    // Merge the spans that overlap into one busy stretch [a, b].
    let [a, b] = spans[i]!;
    for (i++; i < spans.length && spans[i]![0] <= b; i++) b = Math.max(b, spans[i]![1]);
    if (a > t) {
      if (left <= a - t) return t + left;
      left -= a - t;
      t = a;
    }
    const inside = (b - t) / (1 + slowdown);
    if (left <= inside) return t + left * (1 + slowdown);
    left -= inside;
    t = b;
  }
  return t + left;
}
