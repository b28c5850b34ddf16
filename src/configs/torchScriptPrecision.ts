/**
 * The precision a plain PyTorch script trains in, from what runs its matmuls in 16 bits:
 * - the loop's autocast (`torch.autocast("cuda", dtype=…)`, `torch.amp.autocast`, `torch.cuda.amp.autocast()`
 *   whose dtype defaults to float16; read as the precision hint reads it, torchAmp.ts);
 * - FSDP's parameter dtype: `FullyShardedDataParallel(mixed_precision=MixedPrecision(param_dtype=…))`, fully_shard's
 *   `mp_policy=MixedPrecisionPolicy(param_dtype=…)` (absent: the parameters' own dtype, fp32);
 * - a GradScaler without any autocast: fp16 (it exists to keep float16 gradients from underflowing).
 * A dtype that is an expression (nanoGPT's `ptdtype`), an autocast behind a flag, two 16-bit dtypes, or casts of the
 * model itself (`.half()`, `.to(torch.bfloat16)`, `set_default_dtype`) leave the precision to the run: not stated.
 * The fix writes the plan's dtype where the script states one (autocast's dtype, or `enabled=False` for fp32;
 * FSDP's param_dtype), and adds FSDP's mixed precision where the script has no autocast to carry it.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision } from '../protocol/plan';
import { editsOnce, type CallKeywords } from './callKeywords';
import { guardOf, nodeRange, replaceRange } from './python';
import type { StatedSetup } from './setup';
import { readAutocast, torchDtypePrecision, torchDtypeText } from './torchAmp';
import type { ScriptContext } from './torchScriptSetup';
import type { TextEdit, TextRange } from './types';

interface Source {
  value: Precision | 'run';
  /** States a dtype (autocast, param_dtype=…); a weak source only says what holds without one (fp32 parameters, a GradScaler). */
  strong: boolean;
  range?: TextRange;
  write?: (p: Precision, dtype: string) => TextEdit[] | undefined;
}

/** Casts of the model or the default dtype: 16-bit training WAP does not read from them, so it says nothing. */
const MODEL_CASTS = /\.(half|bfloat16)\(\s*\)|set_default_dtype\s*\(|\btorch_dtype\s*=\s*torch\.(bfloat16|float16|half)\b|\.to\([^()\n]*\b(bfloat16|float16|half)\b/;

export const PRECISION_IN_CODE = 'a PyTorch script sets its precision in code: run the forward and loss under torch.autocast("cuda", dtype=torch.bfloat16) (a GradScaler only for float16), or give FSDP mixed_precision=MixedPrecision(param_dtype=…) / fully_shard mp_policy=MixedPrecisionPolicy(param_dtype=…); fp8 needs Transformer Engine or torchao';

/** An autocast call as a source: its dtype, or fp32 when it is switched off with `enabled=False`. */
function autocastSource(ctx: ScriptContext, call: Node): Source | undefined {
  const read = readAutocast(call, ctx.text);
  if (read === undefined) return undefined;
  const site = ctx.keywords(call);
  if (!site || read === 'run' || guardOf(call)) return { value: 'run', strong: true };
  const cudaOnly = read !== 'off' ? read.cudaOnly : /cuda/.test(call.childForFieldName('function')?.text ?? '');
  const enabled = site.get('enabled') ?? (cudaOnly ? site.positional[0] : undefined);
  const disabled = enabled?.type === 'false';
  // A CPU autocast changes nothing on the GPU.
  if (read === 'off' && !disabled) return undefined;
  const enabledAt = enabled ? nodeRange(enabled) : undefined;
  const dtypeAt = read !== 'off' && read.dtype ? nodeRange(read.dtype) : undefined;
  const write = (p: Precision, dtype: string): TextEdit[] | undefined => {
    if (p === 'fp32' || p === 'tf32') return enabledAt ? replaceRange(enabledAt, 'False') : site.write('enabled', 'False');
    const on = disabled && enabledAt ? replaceRange(enabledAt, 'True') : [];
    const set = dtypeAt ? replaceRange(dtypeAt, dtype) : site.write('dtype', dtype);
    return set && [...on, ...set];
  };
  return { value: read === 'off' ? 'fp32' : read.precision, strong: true, range: nodeRange(call), write };
}

/**
 * FSDP's parameter dtype as a source: `keyword` (mixed_precision / mp_policy) of one wrapping call, holding a
 * `policy` (MixedPrecision / MixedPrecisionPolicy) call. Absent, the parameters' own dtype (fp32) holds: a weak source
 * the fix can still add the policy to.
 */
function fsdpSource(ctx: ScriptContext, site: CallKeywords, keyword: string, policy: string, module: string): Source {
  const value = site.get(keyword);
  const cls = ctx.names.spell(policy, module);
  const add = (p: Precision, dtype: string): TextEdit[] | undefined =>
    p === 'fp32' || p === 'tf32' ? [] : cls ? site.write(keyword, `${cls}(param_dtype=${dtype})`) : undefined;
  if (!value) return site.hidden ? { value: 'run', strong: true } : { value: 'fp32', strong: false, write: add };
  if (value.type === 'none') return { value: 'fp32', strong: false, write: add };
  const inner = value.type === 'call' && ctx.names.of(value) === policy ? ctx.keywords(value) : undefined;
  if (!inner) return { value: 'run', strong: true };
  const dtype = inner.get('param_dtype') ?? inner.positional[0];
  const at = dtype ? nodeRange(dtype) : undefined;
  const write = (_p: Precision, text: string): TextEdit[] | undefined => (at ? replaceRange(at, text) : inner.write('param_dtype', text));
  if (!dtype || dtype.type === 'none') return { value: 'fp32', strong: false, write };
  const p = torchDtypePrecision(dtype);
  return p ? { value: p, strong: true, range: nodeRange(dtype), write } : { value: 'run', strong: true };
}

/** A GradScaler that certainly runs says fp16 where nothing else says a dtype; one behind a flag leaves it to the run. */
function scalerSource(ctx: ScriptContext, call: Node): Source | undefined {
  const enabled = ctx.keywords(call)?.get('enabled');
  if (enabled?.type === 'false') return undefined;
  return { value: !enabled || enabled.type === 'true' ? (guardOf(call) ? 'run' : 'fp16') : 'run', strong: false, range: nodeRange(call) };
}

const sixteen = (v: Source['value']): boolean => v === 'bf16' || v === 'fp16' || v === 'fp8';

/** Reads the precision dimension into `stated` (or leaves it unstated where the run decides). */
export function readPrecision(ctx: ScriptContext, stated: StatedSetup): void {
  const autocasts = ctx.allCalls.map((c) => autocastSource(ctx, c)).filter((s): s is Source => !!s);
  const fsdp = [
    ...(ctx.calls.get('FullyShardedDataParallel') ?? []).map((c) => [c, 'mixed_precision', 'MixedPrecision', ctx.names.moduleOf('FullyShardedDataParallel')] as const),
    ...(ctx.calls.get('fully_shard') ?? []).map((c) => [c, 'mp_policy', 'MixedPrecisionPolicy', ctx.names.moduleOf('fully_shard')] as const),
  ].map(([call, keyword, policy, module]) => {
    const site = ctx.keywords(call);
    return site ? fsdpSource(ctx, site, keyword, policy, module ?? 'torch.distributed.fsdp') : { value: 'run' as const, strong: true };
  });
  const scalers = ['GradScaler', 'ShardedGradScaler'].flatMap((n) => ctx.calls.get(n) ?? []).map((c) => scalerSource(ctx, c)).filter((s): s is Source => !!s);
  const strong = [...autocasts, ...fsdp].filter((s) => s.strong);
  if (strong.some((s) => s.value === 'run')) return;
  const low = new Set(strong.map((s) => s.value).filter(sixteen));
  let value: Precision;
  if (low.size > 1) return;
  if (low.size === 1) value = [...low][0] as Precision;
  else if (MODEL_CASTS.test(ctx.text)) return;
  else if (strong.length > 0) value = 'fp32';
  else if (scalers.some((s) => s.value === 'run')) return;
  else value = scalers.length > 0 && autocasts.length === 0 ? 'fp16' : 'fp32';

  // Where the script runs autocast, the dtype is written there (and in any param_dtype it states); without one, in FSDP's policy.
  const targets = autocasts.length > 0 ? strong : [...strong, ...fsdp.filter((s) => !s.strong)];
  const write = (p: Precision): TextEdit[] | undefined => {
    const dtype = ctx.names.torch !== undefined ? torchDtypeText(p, ctx.names.torch) : undefined;
    if (!dtype || targets.length === 0) return undefined;
    const edits = editsOnce(targets.map((s) => s.write?.(p, dtype)));
    return edits && edits.length > 0 ? edits : undefined;
  };
  const same = (p: Precision): boolean => (p === 'tf32' ? 'fp32' : p) === value;
  stated.precision = {
    value, stated: strong.length > 0 || scalers.length > 0, range: strong.find((s) => s.range)?.range ?? scalers[0]?.range ?? stated.anchor,
    set: (p) => write(p), expressible: (plan) => same(plan.precision) || write(plan.precision) !== undefined,
  };
  stated.inexpressible.precision = PRECISION_IN_CODE;
  // FSDP reduce-scatters in the policy's reduce_dtype: float32 beside 16-bit parameters widens the gradients' sync.
  const reduceFp32 = fsdpPolicies(ctx).find(({ inner }) => {
    const reduce = inner.get('reduce_dtype');
    return reduce !== undefined && torchDtypePrecision(reduce) === 'fp32';
  });
  if (reduceFp32 && sixteen(value)) stated.gradientReduceInFp32 = { why: `${reduceFp32.policy}(reduce_dtype=float32): gradients reduce-scattered in fp32` };
}

/** The FSDP mixed-precision policies the script builds inline: FullyShardedDataParallel's MixedPrecision, fully_shard's MixedPrecisionPolicy. */
function fsdpPolicies(ctx: ScriptContext): Array<{ policy: string; inner: CallKeywords }> {
  const out: Array<{ policy: string; inner: CallKeywords }> = [];
  for (const [fn, keyword, policy] of [['FullyShardedDataParallel', 'mixed_precision', 'MixedPrecision'], ['fully_shard', 'mp_policy', 'MixedPrecisionPolicy']] as const) {
    for (const call of ctx.calls.get(fn) ?? []) {
      const value = ctx.keywords(call)?.get(keyword);
      const inner = value?.type === 'call' && ctx.names.of(value) === policy ? ctx.keywords(value) : undefined;
      if (inner) out.push({ policy, inner });
    }
  }
  return out;
}
