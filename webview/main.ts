/**
 * Webview entry (bundled to media/webview.js as one IIFE). Connects to the
 * host, builds the views and announces readiness so the host sends the plan.
 */
import { App } from './app';
import { connectHost } from './host';
import { registerToolkit } from './toolkit';

function start(): void {
  registerToolkit();
  const host = connectHost();
  let root = document.getElementById('wap-root');
  if (!root) {
    root = document.createElement('main');
    root.id = 'wap-root';
    document.body.append(root);
  }
  const app = new App(host, root);
  host.onMessage((m) => {
    try {
      app.handle(m);
    } catch (e) {
      // A malformed plan must not leave a blank panel: show what went wrong.
      app.handle({ type: 'error', message: `Could not draw the plan: ${(e as Error).message}` });
      console.warn(e);
    }
  });
  host.post({ type: 'ready' });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
