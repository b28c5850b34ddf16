/**
 * Code that freezes parameters: a fine-tuning script's `p.requires_grad =
 * False` over a backbone, `module.requires_grad_(False)`, or PEFT's LoRA
 * (`get_peft_model`, which freezes the base model and trains small adapters).
 * A frozen parameter keeps its weights on the GPU but has no gradient, no
 * optimizer state and no weight-gradient GEMM in the backward. WAP plans every
 * parameter as trained, so such a plan over-states memory and backward time:
 * the reading says so where the code freezes, rather than in silence.
 */
import type { Diagnostic } from '../../core/ir';
import { field, namedChildren, rangeOf, type PyNode } from './ast';

/** PEFT's entry points: each wraps a base model whose own parameters are frozen. */
const PEFT_CALLS = /(^|\.)(get_peft_model|prepare_model_for_kbit_training|PeftModel\.from_pretrained)$/;

function firstFreeze(node: PyNode, text: (n: PyNode) => string): { node: PyNode; how: string } | undefined {
  if (node.type === 'assignment') {
    const left = field(node, 'left');
    const right = field(node, 'right');
    if (left?.type === 'attribute' && text(field(left, 'attribute') ?? left) === 'requires_grad' && right && text(right) === 'False') return { node, how: '`requires_grad = False`' };
  }
  if (node.type === 'call') {
    const fn = field(node, 'function');
    const args = field(node, 'arguments');
    const name = fn ? text(fn) : '';
    if (/\.requires_grad_$/.test(name) && args && /^\(\s*(requires_grad\s*=\s*)?False\s*\)$/.test(text(args))) return { node, how: '`requires_grad_(False)`' };
    if (PEFT_CALLS.test(name)) return { node, how: `PEFT (\`${name.split('.').pop()}\`: the base model is frozen, adapters train)` };
  }
  for (const child of namedChildren(node)) {
    const found = firstFreeze(child, text);
    if (found) return found;
  }
  return undefined;
}

/** One note for the file, at the first place that freezes parameters; undefined when nothing does. */
export function frozenParametersNote(root: PyNode, text: (n: PyNode) => string): Diagnostic | undefined {
  const found = firstFreeze(root, text);
  if (!found) return undefined;
  const r = rangeOf(found.node);
  return {
    severity: 'warning', code: 'frozen-parameters', carriesToPlan: true, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn,
    message: `This code freezes parameters (${found.how}); WAP plans every parameter as trained, with its gradient, optimizer state and weight-gradient compute, so memory and backward time are over-stated for the frozen part`,
  };
}
