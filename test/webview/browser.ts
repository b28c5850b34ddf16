/**
 * Shared helpers for the browser tests and the bench: launch Debian's
 * Chromium through playwright-core, write a report for a fixture plan to
 * test-artifacts/ and open it, collecting console errors and CSP violations.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { PlanOutcome, PlanReport } from '../../src/protocol/plan';
import { renderHtmlReport } from '../../src/cli/htmlReport';
import { repoRoot } from './buildBundle';

export const artifactsDir = join(repoRoot, 'test-artifacts');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.WAP_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

export function loadFixture(name: string): PlanReport {
  return JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', `${name}.json`), 'utf8')) as PlanReport;
}

export interface OpenedReport {
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  errors: string[];
  /** Every URL the page requested. */
  requests: string[];
  htmlPath: string;
}

export async function openReport(
  browser: Browser,
  outcome: PlanOutcome,
  artifactName: string,
  options: { viewport?: { width: number; height: number }; readySelector?: string } = {},
): Promise<OpenedReport> {
  const viewport = options.viewport ?? { width: 1400, height: 900 };
  mkdirSync(artifactsDir, { recursive: true });
  const htmlPath = join(artifactsDir, `${artifactName}.html`);
  writeFileSync(htmlPath, renderHtmlReport(outcome));
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  // tsx compiles test callbacks with esbuild's keepNames, which calls a __name helper inside page.evaluate bodies.
  await page.addInitScript('window.__name = (f) => f;');
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} at ${e.sourceFile}:${e.lineNumber}`));
  });
  await page.goto(`file://${htmlPath}`);
  await page.waitForSelector(options.readySelector ?? '.tl-canvas[data-drawn-total]');
  return { page, errors, requests, htmlPath };
}
