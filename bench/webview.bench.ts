/**
 * Webview benchmarks in headless Chromium: a 20,000-event timeline renders
 * (target ≤ 500 ms), a zoom step redraws (target ≤ 16 ms median), and the
 * size of the webview bundle (raw and gzip, dev and minified).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadavg } from 'node:os';
import { build } from 'esbuild';
import type { PlanReport, TimelineEvent, TimelineKind } from '../src/protocol/plan';
import { buildWebviewBundle, bundlePath, repoRoot } from '../test/webview/buildBundle';
import { launchChromium, loadFixture, openReport } from '../test/webview/browser';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

/** A plausible large iteration: 8 GPUs running many micro-batches, comm on two links. */
export function syntheticReport(events: number, seed: number): PlanReport {
  const base = loadFixture('plan-alexnet-pcie4');
  const gpus = 8;
  const perGpu = Math.floor((events * 0.9) / gpus);
  const timeline: TimelineEvent[] = [];
  let rnd = seed;
  const rand = (): number => ((rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648);
  const kinds: TimelineKind[] = ['forward', 'backward'];
  for (let g = 0; g < gpus; g++) {
    let t = g * 0.05;
    for (let i = 0; i < perGpu; i++) {
      const d = 0.02 + rand() * 0.2;
      const kind = i === perGpu - 1 ? 'update' : kinds[i < perGpu / 2 ? 0 : 1];
      timeline.push({ device: g, kind, layer: base.plan.layers[i % base.plan.layers.length].name, startMs: t, endMs: t + d, lane: `gpu:${g}`, microBatch: i % 64, critical: g === 0 });
      t += d + (rand() < 0.2 ? rand() * 0.1 : 0);
    }
  }
  const comm = events - timeline.length;
  let t = 0;
  for (let i = 0; i < comm; i++) {
    const d = 0.05 + rand() * 0.3;
    timeline.push({ device: 0, kind: i % 3 ? 'allreduce' : 'transfer', layer: 'conv2', startMs: t, endMs: t + d, lane: i % 2 ? 'link:nvlink' : 'link:node0-node1', devices: [0, 1, 2, 3], bytes: 4e6 });
    t += d * 0.6;
  }
  const end = Math.max(...timeline.map((e) => e.endMs));
  return { ...base, plan: { ...base.plan, gpus, stepTimeMs: end, memoryPerGpuBytes: new Array(gpus).fill(1e9) }, cluster: { ...base.cluster, gpus, gpuNames: new Array(gpus).fill('GPU') }, timeline };
}

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  await buildWebviewBundle();
  const browser = await launchChromium();
  try {
    const N = 20000;
    const plans = [syntheticReport(N, 1), syntheticReport(N, 2)];
    const { page } = await openReport(browser, loadFixture('plan-alexnet-pcie4'), 'bench-webview', { viewport: { width: 1600, height: 1000 } });

    // Render: a plan message is handled (all three views update, the timeline draws) until the frame after it is painted.
    // The plan is first staged in the page by its own CDP call: passing 4.6 MB as a page.evaluate argument is
    // deserialised in the same renderer task as the timed code, and DevTools goes on working in that task for
    // ~1-2 s after the handler returns, which earlier runs of this bench wrongly counted as render time.
    // The message is cloned before the clock starts; the postMessage rows add the browser's clone of 20k events.
    const renders: number[] = [];
    const handlers: number[] = [];
    const transports: number[] = [];
    for (let i = 0; i < 8; i++) {
      const viaPostMessage = i >= 6;
      await page.evaluate((outcome) => void ((window as unknown as { __benchPlan: unknown }).__benchPlan = outcome), plans[i % 2]);
      const { handler, painted } = await page.evaluate(async (viaPostMessage) => {
        const outcome = (window as unknown as { __benchPlan: PlanReport }).__benchPlan;
        const canvas = document.querySelector<HTMLCanvasElement>('.tl-canvas')!;
        canvas.dataset.events = '';
        const message = structuredClone({ type: 'plan', outcome, controls: { gpus: 8, objective: 'throughput', strategies: 'all', batch: 128 }, maxGpus: 8 });
        const t0 = performance.now();
        if (viaPostMessage) window.postMessage(message, '*');
        else window.dispatchEvent(new MessageEvent('message', { data: message }));
        await new Promise<void>((resolve) => {
          const poll = (): void => (canvas.dataset.events === String(outcome.timeline.length) ? resolve() : void setTimeout(poll, 0));
          poll();
        });
        const handled = performance.now() - t0;
        // A task queued from requestAnimationFrame runs after that frame's style, layout and paint.
        await new Promise<void>((resolve) =>
          requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => resolve();
            ch.port2.postMessage(null);
          }),
        );
        return { handler: handled, painted: performance.now() - t0 };
      }, viaPostMessage);
      if (viaPostMessage) transports.push(painted);
      else {
        renders.push(painted);
        handlers.push(handler);
      }
    }
    const drawnAll = Number(await page.getAttribute('.tl-canvas', 'data-drawn-total'));
    const rectsAll = Number(await page.getAttribute('.tl-canvas', 'data-drawn-rects'));

    // Zoom steps: real wheel events through d3-zoom; handler = synchronous redraw, frame = until the next animation frame.
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    const zoom = await page.evaluate(async () => {
      const canvas = document.querySelector<HTMLCanvasElement>('.tl-canvas')!;
      const r = canvas.getBoundingClientRect();
      const handler: number[] = [];
      const frame: number[] = [];
      const drawn: number[] = [];
      for (let i = 0; i < 40; i++) {
        const deltaY = i < 20 ? -120 : 120;
        const t0 = performance.now();
        canvas.dispatchEvent(new WheelEvent('wheel', { deltaY, clientX: r.left + r.width * 0.4, clientY: r.top + 20, bubbles: true, cancelable: true }));
        handler.push(performance.now() - t0);
        await new Promise((res) => requestAnimationFrame(res));
        frame.push(performance.now() - t0);
        drawn.push(Number(canvas.dataset.drawnTotal));
      }
      return { handler, frame, drawn };
    });

    // Opening a report that embeds the 20,000 events (parse + first draw).
    const t0 = Date.now();
    const opened = await openReport(browser, plans[0], 'bench-webview-20k', { viewport: { width: 1600, height: 1000 } });
    const openMs = Date.now() - t0;
    await opened.page.close();

    const js = readFileSync(bundlePath);
    const min = await build({ entryPoints: [join(repoRoot, 'webview', 'main.ts')], bundle: true, platform: 'browser', format: 'iife', target: 'es2022', minify: true, legalComments: 'none', write: false });
    const minBytes = min.outputFiles[0].contents;
    const css = readFileSync(join(repoRoot, 'media', 'webview.css'));
    return [
      {
        title: `Webview timeline in Chromium (${N.toLocaleString('en-US')} events, 8 GPU + 2 link lanes)`,
        rows: [
          { measure: 'render: plan message → views drawn → next frame painted (median of 6)', ms: r2(median(renders)), target: '≤ 500', min: r2(Math.min(...renders)), max: r2(Math.max(...renders)) },
          { measure: 'of which the message handler (all views, timeline draw)', ms: r2(median(handlers)), target: '—', min: r2(Math.min(...handlers)), max: r2(Math.max(...handlers)) },
          { measure: 'same render, including window.postMessage clone of 20k events (median of 2)', ms: r2(median(transports)), target: '—', min: r2(Math.min(...transports)), max: r2(Math.max(...transports)) },
          { measure: 'zoom step: wheel handler incl. redraw (median of 40)', ms: r2(median(zoom.handler)), target: '≤ 16', min: r2(Math.min(...zoom.handler)), max: r2(Math.max(...zoom.handler)) },
          { measure: 'zoom step: wheel → next frame (median of 40)', ms: r2(median(zoom.frame)), target: '—', min: r2(Math.min(...zoom.frame)), max: r2(Math.max(...zoom.frame)) },
          { measure: 'open report with 20k events embedded (goto → drawn)', ms: openMs, target: '—', min: '', max: '' },
          { measure: `events drawn at full view / after zoom (median)`, ms: `${drawnAll} / ${median(zoom.drawn)}`, target: `${N}`, min: '', max: '' },
          { measure: 'rectangles painted at full view (touching sub-pixel bars merged)', ms: rectsAll, target: '—', min: '', max: '' },
          { measure: 'machine load average (1 min) during the run', ms: r2(loadavg()[0]), target: '—', min: '', max: '' },
        ],
      },
      {
        title: 'Webview bundle size',
        rows: [
          { file: 'media/webview.js (dev build)', bytes: js.length, gzip: gzipSync(js).length },
          { file: 'webview bundle, minified (--production)', bytes: minBytes.length, gzip: gzipSync(minBytes).length },
          { file: 'media/webview.css', bytes: css.length, gzip: gzipSync(css).length },
        ],
      },
    ];
  } finally {
    await browser.close();
  }
}
