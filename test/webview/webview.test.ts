/**
 * The plan webview in real headless Chromium: the HTML report built from the
 * fixture plans is opened from disk and its views are checked against the
 * fixture numbers (lanes, bars, chosen point, reveal messages, CSP, errors).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { analyzeSource } from '../../src/frontends/index';
import { lengthMix, microBatchOf, parseBatching, parseLengthHistogram, pinsOfSetup, planModel, priceOverLengths, resolveCluster } from '../../src/planner/index';
import type { PlanReport, TimelineEvent } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import type { FromWebviewMessage } from '../../src/protocol/webview';
import { buildWebviewBundle } from './buildBundle';
import { artifactsDir, launchChromium, loadFixture, openReport } from './browser';

const COMPUTE = new Set(['forward', 'backward', 'update']);
let browser: Browser;

before(async () => {
  await buildWebviewBundle();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

const posted = (page: Page): Promise<FromWebviewMessage[]> => page.evaluate(() => window.__wapPosted ?? []);

/** Samples the canvas at the centre of every compute bar at least 4 px wide and returns the ones whose colour is not their kind's. */
function pixelMismatches(page: Page, report: PlanReport): Promise<{ checked: number; bad: string[] }> {
  const events = report.timeline.filter((e) => COMPUTE.has(e.kind)).map((e) => ({ lane: e.lane, kind: e.kind, layer: e.layer, s: e.startMs, e: e.endMs }));
  return page.evaluate((evs) => {
    const canvas = document.querySelector<HTMLCanvasElement>('.tl-canvas')!;
    const ctx = canvas.getContext('2d')!;
    const d0 = Number(canvas.dataset.domainStart);
    const d1 = Number(canvas.dataset.domainEnd);
    const cssW = canvas.getBoundingClientRect().width;
    const dpr = canvas.width / cssW;
    const style = getComputedStyle(document.body);
    const probe = document.createElement('span');
    document.body.append(probe);
    const rgb = (cssColor: string): number[] => {
      probe.style.color = cssColor;
      return (getComputedStyle(probe).color.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    };
    const colours: Record<string, number[]> = {};
    for (const k of ['forward', 'backward', 'update']) colours[k] = rgb(style.getPropertyValue(`--wap-${k}`).trim());
    let checked = 0;
    const bad: string[] = [];
    for (const ev of evs) {
      const lane = document.querySelector<HTMLElement>(`.tl-lane[data-lane="${ev.lane}"]`);
      if (!lane) {
        bad.push(`${ev.layer} ${ev.kind}: no lane ${ev.lane}`);
        continue;
      }
      const x0 = ((ev.s - d0) / (d1 - d0)) * cssW;
      const x1 = ((ev.e - d0) / (d1 - d0)) * cssW;
      if (x1 - x0 < 4) continue;
      const y = Number(lane.dataset.top) + Number(lane.dataset.height) / 2;
      const px = ctx.getImageData(Math.floor(((x0 + x1) / 2) * dpr), Math.floor(y * dpr), 1, 1).data;
      const want = colours[ev.kind];
      checked++;
      if (want.some((c, i) => Math.abs(c - px[i]) > 10)) bad.push(`${ev.layer} ${ev.kind} on ${ev.lane}: got rgb(${px[0]},${px[1]},${px[2]}) want rgb(${want.join(',')})`);
    }
    probe.remove();
    return { checked, bad };
  }, events);
}

describe('HTML report of AlexNet on pcie4', () => {
  const report = loadFixture('plan-alexnet-pcie4');
  let page: Page;
  let errors: string[];
  let requests: string[];

  before(async () => {
    ({ page, errors, requests } = await openReport(browser, report, 'webview-alexnet'));
  });
  after(async () => {
    await page?.screenshot({ path: join(artifactsDir, 'webview-alexnet.png'), fullPage: true });
    await page?.close();
  });

  test('has a CSP meta with default-src none and loads nothing from the network', async () => {
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    assert.match(csp ?? '', /^default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+'/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp ?? '')![1];
    assert.ok(nonce.length >= 16);
    assert.equal(await page.evaluate(() => (document.querySelector('script:not([type])') as HTMLScriptElement).nonce), nonce);
    assert.equal(await page.evaluate(() => document.querySelectorAll('script[src], link[href], img[src]').length), 0);
    assert.deepEqual(requests.filter((u) => !u.startsWith('file://') && !u.startsWith('data:')), []);
  });

  test('posts ready on load', async () => {
    assert.deepEqual((await posted(page))[0], { type: 'ready' });
  });

  test('draws one timeline lane per GPU plus one per link', async () => {
    const gpuLanes = await page.$$eval('.tl-lane[data-kind="gpu"]', (ls) => ls.map((l) => (l as HTMLElement).dataset.lane));
    assert.deepEqual(gpuLanes, Array.from({ length: report.plan.gpus }, (_, i) => `gpu:${i}`));
    const links = [...new Set(report.timeline.map((e) => e.lane).filter((l) => l.startsWith('link:')))].sort();
    assert.deepEqual(await page.$$eval('.tl-lane[data-kind="link"]', (ls) => ls.map((l) => (l as HTMLElement).dataset.lane)), links);
  });

  test('draws one bar per compute event, each in its lane and colour', async () => {
    const ds = await page.$eval('.tl-canvas', (c) => ({ ...(c as HTMLElement).dataset }));
    const count = (k: string): number => report.timeline.filter((e) => e.kind === k).length;
    assert.equal(Number(ds.drawnForward), count('forward'));
    assert.equal(Number(ds.drawnBackward), count('backward'));
    assert.equal(Number(ds.drawnUpdate), count('update'));
    assert.equal(Number(ds.drawnTotal), report.timeline.length);
    assert.equal(Number(ds.drawnCritical), report.timeline.filter((e) => e.critical).length);
    for (let g = 0; g < report.plan.gpus; g++) {
      const n = report.timeline.filter((e) => e.lane === `gpu:${g}`).length;
      assert.equal(Number(await page.getAttribute(`.tl-lane[data-lane="gpu:${g}"]`, 'data-events')), n);
    }
    const { checked, bad } = await pixelMismatches(page, report);
    assert.deepEqual(bad, []);
    assert.ok(checked >= report.timeline.filter((e) => COMPUTE.has(e.kind)).length * 0.6, `only ${checked} bars wide enough to sample`);
  });

  test('marks the chosen point on both scaling curves at plan.gpus', async () => {
    const chosen = await page.$$eval('circle.sc-pt.chosen', (cs) => cs.map((c) => Number(c.getAttribute('data-gpus'))));
    assert.deepEqual(chosen, [report.plan.gpus, report.plan.gpus]);
    assert.equal(await page.locator('circle.sc-pt').count(), report.scaling.filter((p) => p.feasible).length * 2);
    assert.equal(await page.locator('[data-baseline="dataParallel"]').count(), 2);
  });

  test('a click on a layer row posts reveal with its line', async () => {
    const layer = report.plan.layers[4];
    await page.click(`.as-row[data-layer="${layer.name}"]`);
    assert.deepEqual((await posted(page)).at(-1), { type: 'reveal', layer: layer.name, line: layer.line });
  });

  test('keyboard reaches every layer row: one tab stop, arrows move, Enter reveals', async () => {
    assert.equal(await page.locator('.as-row').count(), report.plan.layers.length);
    assert.equal(await page.locator('.as-row[tabindex="0"]').count(), 1);
    await page.focus('.as-row[data-index="0"]');
    for (let i = 1; i < report.plan.layers.length; i++) await page.keyboard.press('ArrowDown');
    const last = report.plan.layers.at(-1)!;
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.layer), last.name);
    await page.keyboard.press('Enter');
    assert.deepEqual((await posted(page)).at(-1), { type: 'reveal', layer: last.name, line: last.line });
    const tip = await page.textContent('#wap-tooltip');
    assert.ok(tip?.includes(last.reason), 'focused row shows the hover facts');
    assert.ok(tip?.includes('Cost source'));
  });

  test('hovering a timeline bar shows its facts', async () => {
    const ev = report.timeline.find((e) => e.kind === 'backward' && e.layer === 'conv2' && e.lane === 'gpu:1')!;
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    const box = await page.evaluate((lane) => {
      const c = document.querySelector<HTMLElement>('.tl-canvas')!;
      const l = document.querySelector<HTMLElement>(`.tl-lane[data-lane="${lane}"]`)!;
      const r = c.getBoundingClientRect();
      return { left: r.left, top: r.top, width: r.width, d0: Number(c.dataset.domainStart), d1: Number(c.dataset.domainEnd), y: Number(l.dataset.top) + Number(l.dataset.height) / 2 };
    }, ev.lane);
    const mid = (ev.startMs + ev.endMs) / 2;
    await page.mouse.move(box.left + ((mid - box.d0) / (box.d1 - box.d0)) * box.width, box.top + box.y);
    const tip = await page.textContent('#wap-tooltip');
    assert.ok(tip?.startsWith('conv2'), tip ?? '');
    assert.ok(tip?.includes('backward'));
  });

  test('wheel zoom narrows the time window and redraws only what is visible', async () => {
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    const before = await page.$eval('.tl-canvas', (c) => Number((c as HTMLElement).dataset.domainEnd) - Number((c as HTMLElement).dataset.domainStart));
    const r = await page.$eval('.tl-canvas', (c) => c.getBoundingClientRect().toJSON());
    await page.mouse.move(r.left + r.width * 0.3, r.top + 10);
    for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -300);
    const ds = await page.$eval('.tl-canvas', (c) => ({ ...(c as HTMLElement).dataset }));
    assert.ok(Number(ds.domainEnd) - Number(ds.domainStart) < before / 2, 'window shrank');
    assert.ok(Number(ds.drawnTotal) < report.timeline.length, 'off-screen bars culled');
    await page.focus('.tl-canvas');
    await page.keyboard.press('0');
    assert.equal(Number(await page.getAttribute('.tl-canvas', 'data-drawn-total')), report.timeline.length);
  });

  test('every view has a table of the same numbers behind a toggle', async () => {
    await page.getByText('Show device assignment as table').click();
    assert.equal(await page.locator('#assignment-table tbody tr').count(), report.plan.layers.length);
    await page.getByText('Show timeline as table').click();
    assert.equal(await page.locator('#timeline-table table').nth(1).locator('tbody tr').count(), report.timeline.length);
    await page.getByText('Show scaling curve as table').click();
    assert.equal(await page.locator('#scaling-table tbody tr').count(), report.scaling.length + 3);
    assert.equal(await page.getAttribute('text=Hide timeline as table', 'aria-expanded'), 'true');
  });

  test('controls post replan, exportTrace and applyToConfig; busy/error show in the status line', async () => {
    await page.locator('#ctl-batch input').fill('256');
    await page.locator('#ctl-batch input').press('Enter');
    await page.locator('#ctl-batch input').blur();
    const replan = (await posted(page)).filter((m) => m.type === 'replan').at(-1);
    assert.deepEqual(replan, { type: 'replan', controls: { gpus: 4, objective: 'throughput', strategies: 'all', batch: 256 } });
    await page.click('#btn-export-trace');
    await page.click('#btn-apply-config');
    assert.deepEqual((await posted(page)).slice(-2), [{ type: 'exportTrace' }, { type: 'applyToConfig' }]);
    await page.evaluate(() => window.postMessage({ type: 'busy', message: 'Planning AlexNet on 2 GPUs…' }, '*'));
    await page.waitForFunction(() => document.getElementById('wap-status')?.textContent === 'Planning AlexNet on 2 GPUs…');
    await page.evaluate(() => window.postMessage({ type: 'error', message: 'planner crashed' }, '*'));
    await page.waitForFunction(() => document.getElementById('wap-status')?.dataset.kind === 'error');
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});

describe('HTML report of hybrid VGG16 on 2×2 GPUs', () => {
  const report = loadFixture('plan-vgg16-hybrid-2x2');
  let page: Page;
  let errors: string[];
  before(async () => {
    ({ page, errors } = await openReport(browser, report, 'webview-vgg16'));
  });
  after(async () => page?.close());

  test('shows lanes, bars, strategies and the infeasible 1-GPU point', async () => {
    assert.equal(await page.locator('.tl-lane[data-kind="gpu"]').count(), 4);
    assert.equal(await page.locator('.tl-lane[data-kind="link"]').count(), 2);
    assert.equal(Number(await page.getAttribute('.tl-canvas', 'data-drawn-total')), report.timeline.length);
    const { bad } = await pixelMismatches(page, report);
    assert.deepEqual(bad, []);
    const strategies = await page.$$eval('.as-row', (rs) => rs.map((r) => (r as HTMLElement).dataset.strategy));
    assert.deepEqual(strategies, report.plan.layers.map((l) => l.strategy));
    assert.equal(await page.locator('.as-row[data-layer="fc8"] .as-cell-fill.hybrid').count(), 4);
    const x = page.locator('.sc-infeasible[data-gpus="1"]').first();
    assert.equal(await x.getAttribute('data-feasible'), 'false');
    await x.hover();
    assert.ok((await page.textContent('#wap-tooltip'))?.includes('21.9 GB'));
  });

  test('a light theme switch repaints with light colours', async () => {
    await page.click('#btn-theme');
    await page.waitForFunction(() => document.body.classList.contains('wap-light'));
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(255, 255, 255)');
    await page.screenshot({ path: join(artifactsDir, 'webview-vgg16-light.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  test('a new plan message updates the views in place', async () => {
    const alex = loadFixture('plan-alexnet-pcie4');
    const section = await page.$('#timeline-view');
    await page.evaluate((outcome) => window.postMessage({ type: 'plan', outcome, controls: { gpus: 4, objective: 'throughput', strategies: 'all', batch: 128 }, maxGpus: 4 }, '*'), alex);
    await page.waitForFunction((n) => document.querySelectorAll('.as-row').length === n, alex.plan.layers.length);
    assert.equal(await page.textContent('h1'), 'AlexNet');
    assert.equal(Number(await page.getAttribute('.tl-canvas', 'data-drawn-total')), alex.timeline.length);
    assert.equal(await page.locator('.tl-lane[data-kind="link"]').count(), 1);
    assert.ok(await section!.evaluate((s) => s.isConnected), 'same section element, updated in place');
    assert.deepEqual(errors, []);
  });
});

describe('plan data stays data', () => {
  test('markup in layer names is shown as text and cannot close the data script', async () => {
    const report = loadFixture('plan-alexnet-pcie4');
    const evil = '</script><img src=x id=pwned onerror="window.__pwned=1">';
    report.model = evil;
    report.plan.layers[0].name = evil;
    for (const e of report.timeline) if (e.layer === 'conv1') e.layer = evil;
    const { page, errors } = await openReport(browser, report, 'webview-escaping');
    assert.equal(await page.locator('#pwned').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.equal(await page.textContent('h1'), evil);
    assert.equal(await page.getAttribute('.as-row[data-index="0"]', 'data-layer'), evil);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a plan for an incomplete model shows a visible banner with the count and reasons; a complete one shows none', async () => {
    const alex = loadFixture('plan-alexnet-pcie4');
    const incomplete = { summary: 'incomplete: 3 layers opaque', opaqueLayers: 3, unshapedLayers: 0, reasons: ["'mystery.FancyBlock' is not something WAP models"] };
    const { page, errors } = await openReport(browser, { ...alex, incomplete }, 'webview-incomplete');
    const banner = page.locator('#wap-incomplete');
    assert.equal(await banner.isVisible(), true);
    assert.match((await banner.textContent()) ?? '', /incomplete: 3 layers opaque — the plan covers only the layers WAP could read/);
    assert.match((await banner.textContent()) ?? '', /mystery\.FancyBlock/);
    const box = await banner.boundingBox();
    assert.ok(box && box.height > 10 && box.width > 100, `banner box ${JSON.stringify(box)}`);
    assert.deepEqual(errors, []);
    await page.close();

    const complete = await openReport(browser, alex, 'webview-complete');
    assert.equal(await complete.page.locator('#wap-incomplete').isVisible(), false);
    await complete.page.close();
  });

  test("a plan priced on the data's lengths shows that rate beside the padded one, with the padding in its tooltip", async () => {
    const src = 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512))\n';
    const modelAt = async (tokens: number) => (await analyzeSource('bert.py', src, { sequenceLength: tokens })).models[0]!;
    const options: PlanOptions = { batch: 32, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam', gpus: 2 };
    const cluster = resolveCluster('a100x8');
    const report = planModel(await modelAt(512), cluster, options);
    assert.ok(report.feasible);
    const batching = parseBatching('bins:128', 8);
    const mix = lengthMix(parseLengthHistogram({ lengths: { '60': 30, '250': 70 } }), batching, microBatchOf(report), 512);
    report.lengthMix = await priceOverLengths(report, mix, batching, async (t) => planModel(await modelAt(t), cluster, { ...options, pins: pinsOfSetup(report.plan.setup!) }), 'lengths.json');
    const { page, errors } = await openReport(browser, report, 'webview-length-mix');
    const stat = page.locator('.stat', { hasText: 'On data lengths' });
    assert.equal(await stat.isVisible(), true);
    assert.match((await stat.locator('dd').textContent()) ?? '', /^[\d.,]+k? samples\/s · [\d.]+× padded$/);
    assert.match((await stat.getAttribute('title')) ?? '', /^lengths\.json: mean 193 tokens, \d+% padding; batches drawn from 128-token length bins/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('an infeasible plan shows its reason and still draws the scaling curve', async () => {
    const alex = loadFixture('plan-alexnet-pcie4');
    const outcome = { feasible: false as const, model: 'GPT-XL', batch: 512, cluster: alex.cluster, reason: 'needs 96 GB per GPU; A100 has 40 GB', scaling: alex.scaling.map((p) => ({ ...p, feasible: false, reason: 'out of memory', samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 })), diagnostics: [] };
    const { page, errors } = await openReport(browser, outcome, 'webview-infeasible', { readySelector: '.sc-infeasible' });
    assert.match((await page.textContent('#wap-status')) ?? '', /needs 96 GB per GPU/);
    assert.equal(await page.locator('.sc-infeasible').count(), outcome.scaling.length * 2);
    assert.equal(await page.locator('circle.sc-pt.chosen').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

/** Reads resolved colours in the page: the time-bar segments, the timeline legend and the strategy fills, as [r, g, b]. */
function assignmentColours(page: Page): Promise<{ segments: Array<{ kind: string; rgb: number[]; legend: number[] }>; kinds: Record<string, number[]>; strategies: Record<string, number[]>; timeLegend: string[] }> {
  return page.evaluate(() => {
    const rgb = (node: Element): number[] => (getComputedStyle(node).backgroundColor.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    const legendRgb = (kind: string): number[] => rgb(document.querySelector(`#timeline-view .legend [data-kind="${kind}"] .swatch`)!);
    const segments = Array.from(document.querySelectorAll<HTMLElement>('.as-bar .seg')).map((s) => ({ kind: s.dataset.kind!, rgb: rgb(s), legend: legendRgb(s.dataset.kind!) }));
    const kinds: Record<string, number[]> = {};
    for (const k of ['forward', 'backward', 'allreduce', 'transfer', 'update']) kinds[k] = legendRgb(k);
    kinds.critical = (getComputedStyle(document.querySelector('#timeline-view .swatch.critical')!).borderTopColor.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    // Probe cells with the same classes the grid gives each strategy (pipeline stages 0-5 included).
    const strategies: Record<string, number[]> = {};
    for (const cls of ['data', 'model', 'hybrid', ...[0, 1, 2, 3, 4, 5].map((i) => `pipeline stage-${i}`)]) {
      const probe = document.createElement('span');
      probe.className = `as-cell as-cell-fill ${cls}`;
      document.querySelector('.as-grid')!.append(probe);
      strategies[cls] = rgb(probe);
      probe.remove();
    }
    const timeLegend = Array.from(document.querySelectorAll<HTMLElement>('.as-time-legend [data-kind]')).map((li) => li.textContent ?? '');
    return { segments, kinds, strategies, timeLegend };
  });
}

const rgbDistance = (a: number[], b: number[]): number => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

describe('device-assignment colours', () => {
  const report = loadFixture('plan-vgg16-hybrid-2x2');
  let page: Page;
  before(async () => {
    ({ page } = await openReport(browser, report, 'webview-colours'));
  });
  after(async () => page?.close());

  const themes: Array<[string, (p: Page) => Promise<unknown>]> = [
    ['dark', async () => undefined],
    ['light', (p) => p.click('#btn-theme')],
    [
      'high contrast',
      (p) =>
        p.evaluate(() => {
          // What VS Code does for a high-contrast theme: a body class and black/cyan theme variables.
          document.body.classList.remove('wap-light');
          document.body.classList.add('vscode-high-contrast');
          for (const [k, v] of [['--vscode-editor-background', '#000000'], ['--vscode-foreground', '#ffffff'], ['--vscode-contrastBorder', '#6fc3df']]) document.body.style.setProperty(k, v);
        }),
    ],
  ];
  for (const [theme, apply] of themes) {
    test(`${theme}: time-bar segments use the timeline colours, strategies use none of them`, async () => {
      await apply(page);
      const c = await assignmentColours(page);
      assert.deepEqual(c.timeLegend, ['forward', 'backward', 'all-reduce', 'transfer']);
      const expectedSegments = report.plan.layers.reduce((n, l) => n + [l.forwardMs, l.backwardMs, l.allreduceMs, l.transferMs].filter((v) => v > 0).length, 0);
      assert.equal(c.segments.length, expectedSegments);
      for (const s of c.segments) assert.deepEqual(s.rgb, s.legend, `${s.kind} segment colour is the timeline's ${s.kind}`);
      for (const [cls, fill] of Object.entries(c.strategies)) {
        for (const [kind, colour] of Object.entries(c.kinds)) {
          assert.ok(rgbDistance(fill, colour) >= 60, `${theme}: strategy ${cls} rgb(${fill}) is too close to ${kind} rgb(${colour})`);
        }
      }
      for (const a of ['data', 'model', 'hybrid', 'pipeline stage-0', 'pipeline stage-1']) {
        for (const b of ['data', 'model', 'hybrid', 'pipeline stage-0', 'pipeline stage-1']) {
          if (a < b) assert.ok(rgbDistance(c.strategies[a], c.strategies[b]) >= 40, `${theme}: ${a} and ${b} look alike`);
        }
      }
      await page.locator('#assignment-view').screenshot({ path: join(artifactsDir, `webview-assignment-${theme.replace(' ', '-')}.png`) });
    });
  }
});

describe('a dense timeline', () => {
  test('every event is counted once; touching sub-pixel bars share a rectangle, wide ones never do', async () => {
    const base = loadFixture('plan-alexnet-pcie4');
    // 3,000 back-to-back 0.01 ms forward events on GPU 0 (each far below a pixel at full view), then one wide backward.
    const timeline: TimelineEvent[] = Array.from({ length: 3000 }, (_, i) => ({ device: 0, kind: 'forward' as const, layer: 'conv1', startMs: i * 0.01, endMs: (i + 1) * 0.01, lane: 'gpu:0' }));
    timeline.push({ device: 0, kind: 'backward', layer: 'conv1', startMs: 30, endMs: 60, lane: 'gpu:0' });
    const report = { ...base, plan: { ...base.plan, gpus: 1, stepTimeMs: 60, memoryPerGpuBytes: [1e9] }, timeline };
    const { page, errors } = await openReport(browser, report, 'webview-dense');
    const ds = await page.$eval('.tl-canvas', (c) => ({ ...(c as HTMLElement).dataset }));
    assert.equal(Number(ds.drawnForward), 3000);
    assert.equal(Number(ds.drawnBackward), 1);
    assert.equal(Number(ds.drawnTotal), 3001);
    assert.ok(Number(ds.drawnRects) < 50, `3,000 touching sub-pixel bars painted as ${ds.drawnRects} rectangles`);
    // The merged run still covers the whole forward span: sample its pixels across the lane.
    const gaps = await page.evaluate(() => {
      const canvas = document.querySelector<HTMLCanvasElement>('.tl-canvas')!;
      const lane = document.querySelector<HTMLElement>('.tl-lane[data-lane="gpu:0"]')!;
      const [d0, d1] = [Number(canvas.dataset.domainStart), Number(canvas.dataset.domainEnd)];
      const cssW = canvas.getBoundingClientRect().width;
      const dpr = canvas.width / cssW;
      const probe = document.createElement('span');
      probe.style.color = getComputedStyle(document.body).getPropertyValue('--wap-forward').trim();
      document.body.append(probe);
      const want = (getComputedStyle(probe).color.match(/\d+/g) ?? []).slice(0, 3).map(Number);
      probe.remove();
      const y = Math.floor((Number(lane.dataset.top) + Number(lane.dataset.height) / 2) * dpr);
      const x0 = ((0 - d0) / (d1 - d0)) * cssW;
      const x1 = ((30 - d0) / (d1 - d0)) * cssW;
      const row = canvas.getContext('2d')!.getImageData(0, y, canvas.width, 1).data;
      const bad: number[] = [];
      for (let x = Math.ceil(x0 * dpr) + 1; x < Math.floor(x1 * dpr) - 1; x++) if (want.some((c, i) => Math.abs(c - row[x * 4 + i]) > 10)) bad.push(x);
      return bad;
    });
    assert.deepEqual(gaps, []);
    // Zoomed in far enough that each forward bar is several pixels wide, every bar is its own rectangle again.
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    const r = await page.$eval('.tl-canvas', (c) => c.getBoundingClientRect().toJSON());
    await page.mouse.move(r.left + 2, r.top + 10);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -600);
    const zoomed = await page.$eval('.tl-canvas', (c) => ({ ...(c as HTMLElement).dataset }));
    const barPx = (0.01 / (Number(zoomed.domainEnd) - Number(zoomed.domainStart))) * r.width;
    assert.ok(barPx > 4, `bars are ${barPx.toFixed(2)} px wide after zooming`);
    assert.equal(Number(zoomed.drawnRects), Number(zoomed.drawnTotal));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
