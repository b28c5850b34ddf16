/**
 * Ground truth for the Python frontend's op tests: a fixture folder's `forms.py` Net traced by real torch 1.13
 * (Debian's python3-torch, as CI installs it) with torch.jit.trace. Each test prints what it compares as JSON
 * from the traced `graph`, with `params` (the Net's parameter count), `kernel(node)` (an aten node's kernel name)
 * and `from_input(graph)` (the nodes whose operands come from the input: a parameter's own arithmetic runs once
 * per step, not per sample) at hand.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

export const TORCH_PYTHON = '/usr/bin/python3';

export function traceForms<T>(dir: string, input: number[], report: string, dtype: 'float32' | 'bfloat16' = 'float32'): T {
  const script = `import json, sys, warnings, torch
warnings.simplefilter("ignore")
sys.path.insert(0, ${JSON.stringify(dir)})
import forms
m = forms.Net().to(torch.${dtype})
x = torch.randn(2, ${input.join(', ')}, dtype=torch.${dtype})
graph = torch.jit.trace(m, x).inlined_graph
params = sum(p.numel() for p in m.parameters())
def kernel(node):
    return node.kind().split("::")[1]
def from_input(graph):
    reached, out = {list(graph.inputs())[1].unique()}, []
    for node in graph.nodes():
        if any(v.unique() in reached for v in node.inputs()):
            reached.update(v.unique() for v in node.outputs())
            out.append(node)
    return out
${report}`;
  const r = spawnSync(TORCH_PYTHON, ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${TORCH_PYTHON} needs torch (CI installs python3-torch): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}
