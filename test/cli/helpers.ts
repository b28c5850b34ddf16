/** Runs CLI commands in-process (fast: no tsx start-up per call), capturing what they print. */
import { join } from 'node:path';

export const root = join(__dirname, '..', '..');

export interface Captured {
  code: number;
  out: string;
  err: string;
}

/** Only console is captured: the test runner itself reports through process.stdout. */
export async function capture(run: () => Promise<number>): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = { log: console.log, error: console.error };
  console.log = (...a: unknown[]) => void out.push(a.join(' ') + '\n');
  console.error = (...a: unknown[]) => void err.push(a.join(' ') + '\n');
  try {
    const code = await run();
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    Object.assign(console, saved);
  }
}

/** A small two-model PyTorch file: a conv net that profiles in seconds on wasm, and an MLP. */
export const TINY_TORCH = `import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv(x)))
        x = torch.flatten(x, 1)
        return self.fc(x)


class SmallMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
`;
