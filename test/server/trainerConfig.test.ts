/**
 * A Hugging Face Trainer script through the real server: the script is both
 * the model (Llama-2-7b from its released config beside it) and the training
 * config (TrainingArguments). It sets neither bf16 nor fp16, so it trains in
 * fp32; the user's wap.precision plans it in bf16. Its setup is compared with the model's plan, the
 * quick-fix's WorkspaceEdit writes the plan into the call, and once applied
 * the server finds nothing left to change.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeActionKind, CodeActionRequest, type CodeAction, type TextEdit } from 'vscode-languageserver-protocol/node';
import { ROOT, TestServer } from './harness';

const SCRIPT = join(ROOT, 'test/fixtures/hf-trainer/sft_trainer.py');

function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) => starts[p.line]! + p.character;
  return [...edits]
    .sort((a, b) => offset(b.range.start) - offset(a.range.start))
    .reduce((t, e) => t.slice(0, offset(e.range.start)) + e.newText + t.slice(offset(e.range.end)), text);
}

let server: TestServer;
before(async () => {
  server = await TestServer.start({ settings: { cluster: 'a100x8', batchSize: 64, precision: 'bf16' } });
});
after(async () => server?.stop());

test('TrainingArguments for a 7B full fine-tune without sharding or checkpointing: a setup diagnostic, a quick-fix that writes the plan, and agreement once applied', async () => {
  const text = readFileSync(SCRIPT, 'utf8');
  const uri = await server.open(SCRIPT, text);
  const diag = await server.until('the setup diagnostic on TrainingArguments', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'setup-differs'), 60_000);
  // No bf16/fp16 flag: the Trainer's fp32, which the fix turns into the plan's bf16=True.
  assert.match(diag.message, /^This Hugging Face TrainingArguments trains with fp32, ZeRO 0.*; the plan for .* on '8x A100 SXM4 80GB \(NVSwitch\)' uses bf16, ZeRO [123]/);
  const actions = (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
  const quickfix = actions.find((a) => a.kind === CodeActionKind.QuickFix && a.edit?.changes?.[uri]?.length);
  assert.ok(quickfix, `quick-fixes offered: ${actions.map((a) => a.title).join(' | ')}`);
  assert.match(quickfix.title, /^Use the plan's ZeRO-[123]/);
  const fixed = applyEdits(text, quickfix.edit!.changes![uri]!);
  // ZeRO-2/3 as FSDP words, ZeRO-1 as an inline DeepSpeed config (FSDP has no stage 1).
  assert.match(fixed, /(fsdp="(full_shard|shard_grad_op) auto_wrap"|deepspeed=\{"zero_optimization": \{"stage": 1\}.*\}),\n/);
  assert.ok(fixed.includes('  # per GPU\n'), 'the comment stays');
  assert.ok(fixed.includes('bf16=True'), fixed);
  // Only the TrainingArguments call changed: the lines before and after it are the same.
  const callOf = (t: string) => t.slice(t.indexOf('args = TrainingArguments('), t.indexOf('trainer = Trainer('));
  assert.equal(fixed.replace(callOf(fixed), ''), text.replace(callOf(text), ''));

  await server.change(uri, fixed);
  // The script is the model too: its new arguments (bf16=True) re-plan it; the config is checked against that plan.
  await server.planned(uri);
  const versus = await server.until('the re-check of the fixed script', () => {
    const diags = server.diagnostics.get(uri) ?? [];
    const line = diags.find((d) => d.code === 'config-vs-best');
    return line && !diags.some((d) => d.code === 'setup-differs') ? line : undefined;
  }, 60_000);
  // Nothing beside the script launches it: its GPU count is the plan's, and the line says so.
  assert.match(versus.message, /^your config \(\d+ GPUs: nothing here states how many processes run it, so the plan chose\): .*fits .* · best plan: .* \(1\.0×\)/);
});
