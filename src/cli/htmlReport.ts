/**
 * `wap plan … --html report.html`: the same three views as the VS Code panel
 * in one self-contained file: the webview bundle and stylesheet inlined, the
 * plan embedded as JSON in a non-executable script element, a CSP that allows
 * nothing but the nonce'd script and style (no network).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PlanOutcome } from '../protocol/plan';
import type { PlanControls, ToWebviewMessage } from '../protocol/webview';
import { htmlShell } from '../protocol/webviewHtml';

export interface HtmlReportOptions {
  title?: string;
  /** Folder holding webview.js and webview.css (default: media/ beside dist/, or in the repo when run from sources). */
  mediaDir?: string;
}

function findMediaDir(): string | undefined {
  // dist/cli.js → ../media; src/cli/htmlReport.ts (tsx) → ../../media.
  const candidates = [join(__dirname, '..', 'media'), join(__dirname, '..', '..', 'media')];
  return candidates.find((d) => existsSync(join(d, 'webview.js')));
}

function readAssets(mediaDir: string | undefined): { js: string; css: string } {
  const dir = mediaDir ?? findMediaDir();
  const js = dir ? join(dir, 'webview.js') : undefined;
  if (!dir || !js || !existsSync(js)) {
    throw new Error(`the webview bundle (media/webview.js) is missing${dir ? ` in ${dir}` : ''}: run npm run build`);
  }
  const css = join(dir, 'webview.css');
  if (!existsSync(css)) throw new Error(`media/webview.css is missing in ${dir}: reinstall or rebuild WAP (npm run build)`);
  return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
}

/**
 * JSON for a <script type="application/json"> element: `<` is escaped so the
 * text can never close the element or open a comment, whatever the plan holds;
 * U+2028/2029 for old JS parsers reading it.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Inline script/style text may not contain its own end tag. */
function inlineSafe(text: string, tag: 'script' | 'style'): string {
  return text.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1').replace(/\/\/# sourceMappingURL=.*$/gm, '');
}

export function controlsOf(outcome: PlanOutcome): PlanControls {
  if (outcome.feasible) return { gpus: outcome.plan.gpus, objective: outcome.objective, strategies: outcome.strategies, batch: outcome.batch };
  return { objective: 'throughput', strategies: 'all', batch: outcome.batch };
}

export function renderHtmlReport(outcome: PlanOutcome, options: HtmlReportOptions = {}): string {
  const { js, css } = readAssets(options.mediaDir);
  const nonce = randomBytes(18).toString('base64');
  const message: ToWebviewMessage = { type: 'plan', outcome, controls: controlsOf(outcome), maxGpus: outcome.cluster.gpus };
  const title = options.title ?? `WAP plan: ${outcome.model}`;
  return htmlShell({
    csp: `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; font-src data:`,
    nonce,
    title,
    head: `<meta name="generator" content="wap">\n<style nonce="${nonce}">\n${inlineSafe(css, 'style')}\n</style>`,
    body: `<script type="application/json" id="wap-data">${jsonForScript(message)}</script>\n<script nonce="${nonce}">\n${inlineSafe(js, 'script')}\n</script>`,
  });
}

export function writeHtmlReport(outcome: PlanOutcome, outPath: string, options: HtmlReportOptions = {}): void {
  const html = renderHtmlReport(outcome, options);
  const abs = resolve(outPath);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, html);
}
