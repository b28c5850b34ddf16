/**
 * The HTML shells as strings: the report inlines the real bundle and embeds
 * the plan safely; the panel shell carries a nonce'd CSP and no data; a
 * missing bundle gives a one-line "run npm run build" error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { jsonForScript, renderHtmlReport, writeHtmlReport } from '../../src/cli/htmlReport';
import { renderWebviewHtml } from '../../src/protocol/webviewHtml';
import { buildWebviewBundle, bundlePath } from './buildBundle';
import { loadFixture } from './browser';

before(async () => {
  await buildWebviewBundle();
});

test('report inlines the built bundle and stylesheet under one nonce, with no external references', () => {
  const report = loadFixture('plan-alexnet-pcie4');
  const html = renderHtmlReport(report, { title: 'AlexNet & friends' });
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(nonce, csp);
  // The whole policy: a loosened directive anywhere (unsafe-inline, a host, connect-src) fails here.
  assert.equal(csp, `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; font-src data:`);
  assert.equal(html.match(/http-equiv="Content-Security-Policy"/g)?.length, 1, 'exactly one policy');
  assert.ok(html.includes(`<script nonce="${nonce}">`));
  assert.ok(html.includes(`<style nonce="${nonce}">`));
  assert.ok(html.includes('<title>AlexNet &amp; friends</title>'));
  const bundle = readFileSync(bundlePath, 'utf8').replace(/\/\/# sourceMappingURL=.*$/gm, '');
  assert.ok(html.includes(bundle.slice(0, 2000)), 'bundle text is inlined');
  assert.doesNotMatch(html, /<(script|link|img)[^>]+(src|href)=/);
  assert.equal(renderHtmlReport(report).includes(nonce!), false, 'a fresh nonce per render');
});

test('embedded plan JSON cannot end its script element and parses back to the plan', () => {
  const report = loadFixture('plan-alexnet-pcie4');
  report.model = '</script><script>alert(1)</script><!--';
  const html = renderHtmlReport(report);
  const start = html.indexOf('<script type="application/json" id="wap-data">');
  const body = html.slice(start + '<script type="application/json" id="wap-data">'.length, html.indexOf('</script>', start));
  assert.equal(body.includes('<'), false);
  const message = JSON.parse(body);
  assert.equal(message.type, 'plan');
  assert.deepEqual(message.outcome, report);
  assert.deepEqual(message.controls, { gpus: 4, objective: 'throughput', strategies: 'all', batch: 128 });
  assert.equal(message.maxGpus, 4);
  assert.equal(jsonForScript({ a: '<&>\u2028' }), '{"a":"\\u003c\\u0026\\u003e\\u2028"}');
});

test('writeHtmlReport writes the file, creating folders', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-report-'));
  const out = join(dir, 'nested', 'report.html');
  writeHtmlReport(loadFixture('plan-vgg16-hybrid-2x2'), out);
  const html = readFileSync(out, 'utf8');
  assert.ok(html.startsWith('<!DOCTYPE html>'));
  assert.ok(html.includes('VGG16'));
});

test('a missing bundle is a clear error naming the fix', () => {
  const empty = mkdtempSync(join(tmpdir(), 'wap-media-'));
  assert.throws(() => renderHtmlReport(loadFixture('plan-alexnet-pcie4'), { mediaDir: empty }), /media\/webview\.js\) is missing.*run npm run build/);
  writeFileSync(join(empty, 'webview.js'), 'console.log(1)');
  assert.throws(() => renderHtmlReport(loadFixture('plan-alexnet-pcie4'), { mediaDir: empty }), /webview\.css is missing/);
});

test('panel shell: nonce CSP with the webview source, assets by URI, no data', () => {
  const html = renderWebviewHtml({ scriptUri: 'vscode-resource://x/media/webview.js', styleUri: 'vscode-resource://x/media/webview.css', cspSource: 'vscode-webview://abc', nonce: 'AbCdEfGh12345678' });
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
  assert.equal(csp, "default-src 'none'; script-src 'nonce-AbCdEfGh12345678'; style-src vscode-webview://abc 'nonce-AbCdEfGh12345678'; img-src vscode-webview://abc data:; font-src vscode-webview://abc");
  assert.equal(html.match(/http-equiv="Content-Security-Policy"/g)?.length, 1, 'exactly one policy');
  assert.ok(html.includes('<script nonce="AbCdEfGh12345678" src="vscode-resource://x/media/webview.js"></script>'));
  assert.ok(html.includes('<link rel="stylesheet" nonce="AbCdEfGh12345678" href="vscode-resource://x/media/webview.css">'));
  assert.equal(html.includes('wap-data'), false);
  assert.ok(html.includes('<main id="wap-root"></main>'));
  const withToolkit = renderWebviewHtml({ scriptUri: 'a.js', styleUri: 'a.css', cspSource: 's', nonce: 'AbCdEfGh12345678', toolkitUri: 't.js' });
  assert.ok(withToolkit.includes('<script type="module" nonce="AbCdEfGh12345678" src="t.js"></script>'));
  assert.throws(() => renderWebviewHtml({ scriptUri: 'a', styleUri: 'b', cspSource: 'c', nonce: "x' 'unsafe-inline" }), /nonce/);
});
