/**
 * Every command a user can run (package.json `contributes.commands`) is driven
 * by the workbench e2e suite through the command palette, by its title. Cheap
 * and static, so it runs with the unit tests too and fails as soon as a
 * command is added without an e2e step.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;

test('the e2e suite runs every contributed command from the palette', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string; title: string; category?: string }> } };
  const e2e = readFileSync(join(root, 'test/e2e/vscode.e2e.test.ts'), 'utf8');
  const run = new Set([...e2e.matchAll(/runCommand\(page, '([^']+)'\)/g)].map((m) => m[1]));
  const missing = pkg.contributes.commands.filter((c) => !run.has(`${c.category ? `${c.category}: ` : ''}${c.title}`)).map((c) => c.command);
  assert.deepEqual(missing, [], `commands without an e2e step: ${missing.join(', ')}`);
});
