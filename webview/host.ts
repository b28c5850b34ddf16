/**
 * The webview's link to its host. Inside VS Code that is acquireVsCodeApi();
 * in the self-contained HTML report (and in tests) a fallback reads the first
 * message from <script type="application/json" id="wap-data"> and records
 * posted messages on window.__wapPosted.
 */
import type { FromWebviewMessage, ToWebviewMessage, WebviewPersistedState } from '../src/protocol/webview';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  interface Window {
    acquireVsCodeApi?: () => VsCodeApi;
    __wapPosted?: FromWebviewMessage[];
  }
}

export interface Host {
  /** True inside a VS Code webview; false in the HTML report. */
  readonly inVsCode: boolean;
  post(message: FromWebviewMessage): void;
  getState(): WebviewPersistedState | undefined;
  setState(state: WebviewPersistedState): void;
  /** Subscribes to host messages; in the report, the embedded plan is delivered once, asynchronously. */
  onMessage(handler: (message: ToWebviewMessage) => void): void;
}

const MESSAGE_TYPES = new Set(['plan', 'busy', 'error']);

export function isToWebviewMessage(value: unknown): value is ToWebviewMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { type?: unknown; outcome?: unknown; message?: unknown };
  if (typeof m.type !== 'string' || !MESSAGE_TYPES.has(m.type)) return false;
  if (m.type === 'plan') return typeof m.outcome === 'object' && m.outcome !== null;
  return typeof m.message === 'string';
}

function readEmbedded(): ToWebviewMessage | { type: 'error'; message: string } | undefined {
  const node = document.getElementById('wap-data');
  if (!node || !node.textContent || !node.textContent.trim()) return undefined;
  try {
    const parsed: unknown = JSON.parse(node.textContent);
    if (isToWebviewMessage(parsed)) return parsed;
    return { type: 'error', message: 'The embedded plan data is not a plan message.' };
  } catch (e) {
    return { type: 'error', message: `The embedded plan data is not valid JSON: ${(e as Error).message}` };
  }
}

export function connectHost(): Host {
  const api = typeof window.acquireVsCodeApi === 'function' ? window.acquireVsCodeApi() : undefined;
  const handlers: Array<(m: ToWebviewMessage) => void> = [];
  const deliver = (m: ToWebviewMessage): void => handlers.forEach((h) => h(m));
  window.addEventListener('message', (e: MessageEvent) => {
    if (isToWebviewMessage(e.data)) deliver(e.data);
  });

  if (api) {
    return {
      inVsCode: true,
      post: (m) => api.postMessage(m),
      getState: () => (api.getState() as WebviewPersistedState | undefined) ?? undefined,
      setState: (s) => api.setState(s),
      onMessage: (h) => handlers.push(h),
    };
  }

  const posted: FromWebviewMessage[] = (window.__wapPosted = window.__wapPosted ?? []);
  let state: WebviewPersistedState | undefined;
  let embeddedSent = false;
  return {
    inVsCode: false,
    post: (m) => posted.push(m),
    getState: () => state,
    setState: (s) => {
      state = s;
    },
    onMessage: (h) => {
      handlers.push(h);
      if (embeddedSent) return;
      embeddedSent = true;
      const first = readEmbedded();
      if (first) queueMicrotask(() => deliver(first));
    },
  };
}
