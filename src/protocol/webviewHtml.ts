/**
 * The HTML shell of the plan webview, shared by the VS Code panel (src/extension)
 * and the self-contained report (src/cli/htmlReport.ts). Pure string code, no
 * node or vscode imports. The shell never carries plan data: the panel sends
 * it by postMessage, the report embeds it as JSON in a non-executable script.
 */

export interface WebviewHtmlOptions {
  /** URI of media/webview.js as the webview sees it (webview.asWebviewUri). */
  scriptUri: string;
  /** URI of media/webview.css. */
  styleUri: string;
  /** webview.cspSource. */
  cspSource: string;
  /** A fresh random nonce per render (base64/alphanumeric). */
  nonce: string;
  /** Optional extra module script (e.g. a separately shipped toolkit bundle). */
  toolkitUri?: string;
  title?: string;
}

/** Escapes text for a double-quoted HTML attribute value or a text node (single quotes stay, so CSP meta reads as written). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function checkNonce(nonce: string): string {
  if (!/^[A-Za-z0-9+/=_-]{8,}$/.test(nonce)) throw new Error('webview nonce must be at least 8 base64/alphanumeric characters');
  return nonce;
}

export interface ShellParts {
  csp: string;
  /** Published for the toolkit (FAST reads meta[property=csp-nonce] for the <style> probes it inserts). */
  nonce: string;
  title: string;
  head: string;
  body: string;
}

export function htmlShell(p: ShellParts): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(p.csp)}">
<meta property="csp-nonce" content="${escapeHtml(p.nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title>
${p.head}
</head>
<body>
<main id="wap-root"></main>
${p.body}
</body>
</html>
`;
}

export function webviewCsp(cspSource: string, nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src ${cspSource} 'nonce-${nonce}'; img-src ${cspSource} data:; font-src ${cspSource}`;
}

/** The panel's HTML: CSP with nonce, stylesheet and script by URI, no data. */
export function renderWebviewHtml(options: WebviewHtmlOptions): string {
  const nonce = checkNonce(options.nonce);
  const toolkit = options.toolkitUri ? `<script type="module" nonce="${nonce}" src="${escapeHtml(options.toolkitUri)}"></script>\n` : '';
  return htmlShell({
    csp: webviewCsp(options.cspSource, nonce),
    nonce,
    title: options.title ?? 'WAP plan',
    head: `<link rel="stylesheet" nonce="${nonce}" href="${escapeHtml(options.styleUri)}">`,
    body: `${toolkit}<script nonce="${nonce}" src="${escapeHtml(options.scriptUri)}"></script>`,
  });
}
