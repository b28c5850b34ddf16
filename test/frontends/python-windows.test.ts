/**
 * Windowed attention as Swin writes it, read for the assumed input: windows
 * folded into the batch (`x.reshape(B * nW, N, C)`, `qkv.permute(2, 0, 3, 1, 4)`
 * then `qkv[i]`, `attn.view(x.size(0) // nW, nW, …)`, `.view(-1, heads, N, N)`),
 * channels-last F.pad to a multiple of the window, a shift mask built from
 * `x.new_zeros` with masked_fill, a position-bias MLP run on a registered
 * constant table and indexed by a constant index, and patch merging by stepped
 * slices. Expected numbers are torch's own (parameters, and forward-hook
 * output shapes for input [2, 3, 224, 224]).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const SOURCE = `import torch
import torch.nn as nn
import torch.nn.functional as F


class WindowBlock(nn.Module):
    def __init__(self, dim=8, heads=2, ws=6, shift=3):
        super().__init__()
        self.heads, self.ws, self.shift = heads, ws, shift
        self.stem = nn.Conv2d(3, dim, kernel_size=4, stride=4)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.cpb = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, heads, bias=False))
        coords = torch.arange(-(ws - 1), ws, dtype=torch.float32)
        table = torch.stack(torch.meshgrid([coords, coords], indexing="ij")).permute(1, 2, 0).contiguous().unsqueeze(0)
        self.register_buffer("table", table)
        grid = torch.flatten(torch.stack(torch.meshgrid([torch.arange(ws), torch.arange(ws)], indexing="ij")), 1)
        rel = (grid[:, :, None] - grid[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("index", rel.sum(-1).flatten())
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        x = self.stem(x).permute(0, 2, 3, 1)
        B, H, W, C = x.shape
        ws, N = self.ws, self.ws * self.ws
        x = F.pad(x, (0, 0, 0, (ws - W % ws) % ws, 0, (ws - H % ws) % ws))
        _, pH, pW, _ = x.shape
        x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        nW = (pH // ws) * (pW // ws)
        x = x.view(B, pH // ws, ws, pW // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B * nW, N, C)
        qkv = self.qkv(x).reshape(x.size(0), x.size(1), 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        bias = self.cpb(self.table).view(-1, self.heads)[self.index].view(N, N, -1).permute(2, 0, 1).contiguous()
        attn = q.matmul(k.transpose(-2, -1)) + 16 * torch.sigmoid(bias).unsqueeze(0)
        mask = x.new_zeros((pH, pW))
        mask[-self.shift:, :] = 1
        mask = mask.view(pH // ws, ws, pW // ws, ws).permute(0, 2, 1, 3).reshape(nW, N)
        mask = mask.unsqueeze(1) - mask.unsqueeze(2)
        mask = mask.masked_fill(mask != 0, float(-100.0))
        attn = attn.view(x.size(0) // nW, nW, self.heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
        attn = F.softmax(attn.view(-1, self.heads, N, N), dim=-1)
        x = self.proj(attn.matmul(v).transpose(1, 2).reshape(x.size(0), x.size(1), C))
        x = x.view(B, pH // ws, pW // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, pH, pW, C)
        x = x[:, :H, :W, :].contiguous()
        x0, x1 = x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :]
        x2, x3 = x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]
        return self.reduction(torch.cat([x0, x1, x2, x3], -1))

`;

test('Swin-style shifted window attention with a continuous position bias: torch params and leaf shapes', () => {
  const spec = parsePythonSource('windows.py', SOURCE).models.find((m) => m.name === 'WindowBlock');
  assert.ok(spec);
  const m = analyzeModel(spec);
  const warnings = m.diagnostics.filter((d) => d.severity === 'warning');
  assert.deepEqual(warnings.map((d) => d.message), []);
  // sum(p.numel() for p in WindowBlock().parameters())
  assert.equal(m.totals.params, 1272);
  const shape = (name: string) => m.layers.find((l) => l.name === name)?.outputShape;
  // torch's hooks: stem [8, 56, 56], cpb.0 [11, 11, 16], cpb.2 [11, 11, 2], reduction [28, 28, 16].
  assert.deepEqual(shape('stem'), [8, 56, 56]);
  assert.deepEqual(shape('cpb.0'), [11, 11, 16]);
  assert.deepEqual(shape('cpb.2'), [11, 11, 2]);
  assert.deepEqual(shape('reduction'), [28, 28, 16]);
  // torch sees qkv's output as [B · 100 windows, 36, 24]; the IR keeps the batch apart: [100, 36, 24].
  assert.deepEqual(shape('qkv'), [100, 36, 24]);
  assert.deepEqual(shape('proj'), [100, 36, 8]);
  assert.ok(m.diagnostics.some((d) => d.code === 'specialised-input'));
});
