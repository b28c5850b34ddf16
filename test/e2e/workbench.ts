/**
 * Playwright helpers that drive the VS Code workbench the way a person does:
 * quick open, the command palette, hovering a word, the lightbulb. They wait
 * on conditions, never on fixed sleeps.
 */
import type { Browser, Frame, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.WAP_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export async function openWorkbench(page: Page, url: string, folder: string): Promise<void> {
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90_000 });
}

/** Opens a workspace file through Quick Open (Ctrl+P), as a user would. */
export async function openFile(page: Page, relativePath: string): Promise<void> {
  const base = relativePath.split('/').pop()!;
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(relativePath);
  // The list first shows recently opened files; wait until the file search has put ours on top.
  const top = page.locator('.quick-input-list .monaco-list-row[data-index="0"]');
  const deadline = Date.now() + 30_000;
  while (!((await top.innerText().catch(() => '')).includes(base))) {
    if (Date.now() > deadline) throw new Error(`Quick Open never listed ${relativePath}`);
    await page.waitForTimeout(100);
  }
  await page.keyboard.press('Enter');
  // With the editor split (a plan view or an export preview beside it), each group may show the file: any active tab will do.
  await page.locator(`.tab.active[aria-label*="${base}"]`).first().waitFor({ timeout: 30_000 });
  await page.locator('.editor-instance .view-lines').first().waitFor();
}

/** Runs a command from the palette by its title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  // Enter runs the focused top row: until the palette has filtered, that row may be a recently used
  // command (the one a slow machine ran instead, while a matching row already showed further down).
  const top = page.locator('.quick-input-list .monaco-list-row[data-index="0"]');
  const deadline = Date.now() + 30_000;
  while (!((await top.innerText().catch(() => '')).includes(title))) {
    if (Date.now() > deadline) throw new Error(`the command palette never put '${title}' on top`);
    await page.waitForTimeout(100);
  }
  await page.keyboard.press('Enter');
}

/** Scrolls the active editor so `line` (1-based) is visible, with Ctrl+G. */
export async function goToLine(page: Page, line: number): Promise<void> {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden' });
}

/**
 * The screen box of `word` inside the first rendered editor line that contains `lineText`.
 * Monaco renders a plain line as one span, so a DOM Range finds the word's own box.
 */
export async function wordBox(page: Page, lineText: string, word: string): Promise<{ x: number; y: number }> {
  const handle = page.locator('.editor-instance .view-line', { hasText: lineText }).first();
  await handle.waitFor({ timeout: 30_000 });
  const box = await handle.evaluate((lineEl, w) => {
    const walker = document.createTreeWalker(lineEl, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // Monaco renders spaces as U+00A0.
      const text = (node.textContent ?? '').replace(/\u00a0/g, ' ');
      const at = text.indexOf(w);
      if (at >= 0) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + w.length);
        const r = range.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
    }
    return undefined;
  }, word);
  if (!box) throw new Error(`'${word}' not found on the line with '${lineText}'`);
  return box;
}

/** Hovers a word and returns the hover widget's text once it contains `expect`. */
export async function hoverWord(page: Page, lineText: string, word: string, expect: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const { x, y } = await wordBox(page, lineText, word);
    await page.mouse.move(x - 30, y + 40);
    await page.mouse.move(x, y, { steps: 4 });
    const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents').first();
    try {
      await hover.waitFor({ state: 'visible', timeout: 5_000 });
      last = await hover.innerText();
      if (expect.test(last)) return last;
    } catch {
      /* no hover yet: the server may still be planning */
    }
    await page.mouse.move(5, 5);
  }
  throw new Error(`hover on '${word}' never matched ${expect}; last text: ${last.slice(0, 500)}`);
}

/** The inner frame of the active webview (webviews sit two iframes deep). */
export async function webviewFrame(page: Page, contentSelector: string, timeoutMs = 60_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (frame.name() === 'active-frame' || frame.url().includes('fake.html') || frame.url().includes('index.html?id=')) {
        try {
          if ((await frame.locator(contentSelector).count()) > 0) return frame;
        } catch {
          /* frame detached while we looked */
        }
      }
    }
    await page.waitForTimeout(250);
  }
  // What the user would see instead: the toasts (an error, a progress message) say why no view came.
  const toasts = await page.locator('.notification-toast').allInnerTexts().catch(() => []);
  throw new Error(`no webview frame with '${contentSelector}'; notifications: ${JSON.stringify(toasts).slice(0, 800)}`);
}

export async function statusBarText(page: Page): Promise<string> {
  return page.locator('.statusbar').innerText();
}
