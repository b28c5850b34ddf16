/**
 * Which attention kernel the training code asks transformers for, read (never run) from the model's file and then
 * the Python files beside it: `attn_implementation="eager"` given to from_pretrained / from_config / a config class,
 * or `model.set_attn_implementation("eager")`. Eager attention writes the [heads, T, T] scores and probabilities to
 * memory between kernels and keeps the probabilities for the backward (transformers' eager_attention_forward), where
 * "sdpa", "flash_attention_2|3" and "flex_attention" run a fused kernel that keeps neither. WAP prices fused attention
 * unless told, so a script that trains in eager (transformers recommends it for Gemma 2's soft-capped scores) was
 * planned with none of those bytes: at 8k tokens, gigabytes per layer. A call behind an `if`, or a value WAP cannot
 * read, gives no hint.
 */
import type { Node } from 'web-tree-sitter';
import type { PlanOptions } from '../protocol/planOptions';
import { firstCallHint } from './firstHint';
import { callArgs, stringLiteral } from './python';

export interface AttentionHint {
  kernel: 'fused' | 'unfused';
  /** 'train.py:12 (attn_implementation="eager")'. */
  source: string;
}

/** transformers' ATTN_IMPLEMENTATION names and the kernel each runs; others (a hub kernel repo) say nothing. */
const KERNELS: Readonly<Record<string, AttentionHint['kernel']>> = {
  eager: 'unfused', sdpa: 'fused', flash_attention_2: 'fused', flash_attention_3: 'fused', flex_attention: 'fused',
};

/** The implementation a call names: its `attn_implementation=` keyword, or set_attn_implementation's argument. */
function namedImplementation(call: Node): Node | undefined {
  const fn = call.childForFieldName('function')?.text.replace(/\s+/g, '') ?? '';
  const args = callArgs(call);
  if (!args) return undefined;
  if (/(^|\.)set_attn_implementation$/.test(fn)) return args.positional[0] ?? args.keywords.get('attn_implementation');
  return args.keywords.get('attn_implementation');
}

/** The kernel the Python files ask for: the model's own file first, then the others. */
export function attentionHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): AttentionHint | undefined {
  return firstCallHint(files, modelFile, /attn_implementation/, (call, name) => {
    const value = namedImplementation(call);
    const kernel = value ? KERNELS[stringLiteral(value) ?? ''] : undefined;
    return value && kernel ? { kernel, source: `${name}:${value.startPosition.row + 1} (attn_implementation=${value.text})` } : undefined;
  });
}

/** The options with the code's attention kernel, unless a flag or setting chose one (`--attention`). */
export function withAttentionFrom(options: PlanOptions, hint: AttentionHint | undefined): PlanOptions {
  if (!hint || options.attentionKernel) return options;
  return { ...options, attentionKernel: hint.kernel, attentionSource: hint.source };
}
