/**
 * VS Code's default split leaves the plan view about 526 px wide. There the
 * device assignment must still show every GPU column and the time bar of each
 * layer without scrolling, with the strategy under the layer name; in a wide
 * view the Strategy column is back. The timeline legend lists kinds the plan
 * does not have (ZeRO gathers, recompute) only when they occur.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { buildWebviewBundle } from './buildBundle';
import { launchChromium, loadFixture, openReport } from './browser';

let browser: Browser;
before(async () => {
  await buildWebviewBundle();
  browser = await launchChromium();
});
after(async () => browser?.close());

interface Layout {
  viewport: number;
  scrollOverflow: number;
  rowsOutside: string[];
  strategyColumnShown: boolean;
  inlineStrategy: string;
}

async function layoutAt(width: number): Promise<Layout> {
  const report = loadFixture('plan-vgg16-hybrid-2x2');
  const { page, errors } = await openReport(browser, report, `narrow-${width}`, { viewport: { width, height: 900 } });
  try {
    const layout = await page.evaluate(() => {
      const scroll = document.querySelector<HTMLElement>('.as-scroll')!;
      const box = scroll.getBoundingClientRect();
      const rowsOutside: string[] = [];
      for (const row of Array.from(document.querySelectorAll<HTMLElement>('.as-row'))) {
        for (const part of Array.from(row.querySelectorAll<HTMLElement>('.as-cell, .as-bar'))) {
          const r = part.getBoundingClientRect();
          if (r.right > box.right + 0.5 || r.width <= 0) rowsOutside.push(`${row.dataset.layer}:${part.className}`);
        }
      }
      const strategy = document.querySelector<HTMLElement>('.as-row .as-strategy')!;
      const inline = document.querySelector<HTMLElement>('.as-row .as-strategy-inline')!;
      return {
        viewport: window.innerWidth,
        scrollOverflow: scroll.scrollWidth - scroll.clientWidth,
        rowsOutside,
        strategyColumnShown: getComputedStyle(strategy).display !== 'none',
        inlineStrategy: getComputedStyle(inline).display !== 'none' ? inline.textContent ?? '' : '',
      };
    });
    assert.deepEqual(errors, []);
    return layout;
  } finally {
    await page.close();
  }
}

test('at the default split (526 px) every GPU cell and time bar is visible without scrolling', async () => {
  const narrow = await layoutAt(526);
  assert.equal(narrow.viewport, 526);
  assert.equal(narrow.scrollOverflow, 0, 'no horizontal scrolling needed');
  assert.deepEqual(narrow.rowsOutside, []);
  assert.equal(narrow.strategyColumnShown, false);
  assert.match(narrow.inlineStrategy, /data parallel|model parallel|hybrid|pipeline/);
});

test('a wide view keeps the Strategy column', async () => {
  const wide = await layoutAt(1400);
  assert.equal(wide.strategyColumnShown, true);
  assert.equal(wide.inlineStrategy, '');
  assert.deepEqual(wide.rowsOutside, []);
});

test('the timeline legend lists ZeRO and recompute kinds only when the plan has such events', async () => {
  const report = loadFixture('plan-vgg16-hybrid-2x2');
  const withGather = structuredClone(report);
  const first = withGather.timeline.find((e) => e.kind === 'forward')!;
  withGather.timeline.push({ ...first, kind: 'allgather', lane: 'link:nvlink', devices: [0, 1], bytes: 1e6 });
  for (const [outcome, expectGather] of [
    [report, false],
    [withGather, true],
  ] as const) {
    const { page } = await openReport(browser, outcome, `legend-${expectGather}`, { viewport: { width: 1400, height: 900 } });
    try {
      const shown = await page.evaluate(() =>
        Array.from(document.querySelectorAll<HTMLElement>('#timeline-view .legend li[data-kind]'))
          .filter((li) => !li.hidden)
          .map((li) => li.dataset.kind),
      );
      assert.ok(shown.includes('forward') && shown.includes('allreduce'));
      assert.equal(shown.includes('allgather'), expectGather, `legend: ${shown.join(', ')}`);
      assert.equal(shown.includes('recompute'), false);
    } finally {
      await page.close();
    }
  }
});

test('the header speaks plainly: no "vs pure DP" on a plan that is that baseline, search details in a tooltip', async () => {
  const report = loadFixture('plan-vgg16-hybrid-2x2');
  const asBaseline = structuredClone(report);
  asBaseline.plan.gpus = asBaseline.baselines.dataParallel.gpus;
  for (const l of asBaseline.plan.layers) l.strategy = 'data';
  for (const [outcome, expectRatio] of [
    [report, true],
    [asBaseline, false],
  ] as const) {
    const { page } = await openReport(browser, outcome, `header-${expectRatio}`, { viewport: { width: 1400, height: 900 } });
    try {
      const stats = await page.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>('.stat')).map((s) => ({ k: s.querySelector('dt')!.textContent!, v: s.querySelector('dd')!.textContent!, tip: s.title })));
      const ratio = stats.find((s) => s.k.startsWith('vs data parallel'));
      assert.equal(!!ratio, expectRatio, JSON.stringify(stats));
      const search = stats.find((s) => s.k === 'Search')!;
      assert.doesNotMatch(search.v, /chain-dp|configs/);
      assert.match(search.tip, /configurations evaluated/);
      assert.ok(!stats.some((s) => /^Costs$/.test(s.k)));
    } finally {
      await page.close();
    }
  }
});
