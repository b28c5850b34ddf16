/**
 * Megatron-LM launch arguments in shell scripts (pretrain_gpt.py and friends):
 * --tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --context-parallel-size, --sequence-parallel, --recompute-granularity,
 * --micro-batch-size, --global-batch-size, --bf16/--fp16 and
 * --use-distributed-optimizer. Arguments live in bash arrays, strings or
 * continued lines alike, so they are found as flag tokens anywhere outside
 * comments; `$TP`-style values resolve through the script's one assignment.
 */
import type { Precision, RecomputeMode, ZeroStage } from '../protocol/plan';
import type { TokenDispatcher } from '../protocol/planOptions';
import { isLaunchScriptName } from './launchScripts';
import { compareSetup, type SetupDim, type StatedSetup } from './setup';
import { dropArgument, insertAfter } from './shellEdits';
import { findAssignments, isMakefileName, resolveReference, splitCommands } from './shellWords';
import type { ConfigReader, TextEdit, TextRange } from './types';
import { FSDP_WEIGHT_GATHER, megatronSerialSync, megatronWeightGather } from './frameworkTimings';

interface Flag {
  name: string;
  start: number;
  end: number;
  value?: { raw: string; start: number; end: number };
}

/** `--name value` / `--name=value` / `--name` tokens outside comments. */
function scanFlags(text: string): Flag[] {
  const flags: Flag[] = [];
  const re = /(^|[\s("'])(--[a-z][a-z0-9-]*)(?:(=|[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"')\\]+))?/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + m[1]!.length;
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    if (/^\s*#/.test(text.slice(lineStart, start)) || text.slice(lineStart, start).includes(' #')) continue;
    const flag: Flag = { name: m[2]!, start, end: start + m[2]!.length };
    const raw = m[4];
    if (raw !== undefined && !raw.startsWith('--')) {
      // A quoted value (`--data-parallel-sharding-strategy="optim_grads_params"`) is the text inside the quotes.
      const quoted = /^["']/.test(raw) ? 1 : 0;
      const vs = start + m[2]!.length + m[3]!.length + quoted;
      const inner = raw.slice(quoted, raw.length - quoted);
      flag.value = { raw: inner, start: vs, end: vs + inner.length };
    } else if (raw !== undefined) re.lastIndex = flag.end; // the next token is a flag of its own
    flags.push(flag);
  }
  return flags;
}

const NUMERIC: Array<[string, 'tensorParallel' | 'pipelineStages' | 'contextParallel' | 'expertParallel' | 'expertTensorParallel' | 'microBatch' | 'globalBatch']> = [
  ['--tensor-model-parallel-size', 'tensorParallel'],
  ['--pipeline-model-parallel-size', 'pipelineStages'],
  ['--context-parallel-size', 'contextParallel'],
  ['--expert-model-parallel-size', 'expertParallel'],
  ['--expert-tensor-parallel-size', 'expertTensorParallel'],
  ['--micro-batch-size', 'microBatch'],
  ['--global-batch-size', 'globalBatch'],
];

function readMegatronSetup(fileName: string, text: string): StatedSetup | undefined {
  const flags = scanFlags(text);
  const megatron = flags.filter((f) => f.name.startsWith('--tensor-model-parallel') || f.name.startsWith('--pipeline-model-parallel') || f.name === '--micro-batch-size');
  if (megatron.length === 0) return undefined;
  const assignments = findAssignments(text, splitCommands(text), isMakefileName(fileName));
  const known = new Set([...NUMERIC.map(([n]) => n), '--bf16', '--fp16', '--fp8-format', '--sequence-parallel', '--recompute-granularity', '--recompute-activations', '--use-distributed-optimizer', '--overlap-param-gather']);
  const last = flags.filter((f) => known.has(f.name)).reduce((a, b) => (b.end > a.end ? b : a), megatron[0]!);
  const tail = last.value?.end ?? last.end;
  const anchor: TextRange = { start: megatron[0]!.start, end: megatron[0]!.end };
  const find = (name: string): Flag | undefined => flags.find((f) => f.name === name);
  // A missing flag goes after the last Megatron argument, on its line.
  const add = (flag: string): TextEdit[] => insertAfter(tail, flag);
  const drop = (f: Flag): TextEdit[] => dropArgument(text, f.start, f.value?.end ?? f.end);
  const stated: StatedSetup = { label: 'Megatron-LM launch', anchor, inexpressible: {} };
  for (const [name, key] of NUMERIC) {
    const f = find(name);
    if (!f?.value) continue;
    let v: { value: string; start: number; end: number } = { value: f.value.raw, start: f.value.start, end: f.value.end };
    if (v.value.startsWith('$')) {
      const r = resolveReference(v.value, v.start, assignments);
      if (!r) continue; // computed at run time
      v = r;
    }
    // Sizes and degrees are whole numbers from 1; a 0 states nothing (Megatron itself would divide by it).
    if (!/^0*[1-9]\d*$/.test(v.value.trim())) continue;
    const at = v;
    stated[key] = { value: Number(v.value), stated: true, range: { start: at.start, end: at.end }, set: (n: number) => [{ start: at.start, end: at.end, newText: String(n) }] } as SetupDim<number>;
  }
  const set = (name: string, on: boolean): TextEdit[] => {
    const f = find(name);
    return on ? (f ? [] : add(name)) : f ? drop(f) : [];
  };
  const bf16 = find('--bf16');
  const fp16 = find('--fp16');
  // Transformer Engine's fp8 GEMMs (--fp8-format e4m3|hybrid) run beside --bf16 or --fp16.
  const fp8 = find('--fp8-format');
  const precision: Precision = fp8?.value ? 'fp8' : bf16 ? 'bf16' : fp16 ? 'fp16' : 'fp32';
  stated.precision = {
    value: precision, stated: !!(fp8 ?? bf16 ?? fp16), range: fp8 ?? bf16 ?? fp16 ?? anchor,
    set: (p) => {
      if (p === 'fp8') return fp8 ? undefined : [...set('--bf16', !fp16), ...add('--fp8-format hybrid')];
      const noFp8 = fp8 ? drop(fp8) : [];
      const want = p === 'bf16' ? '--bf16' : p === 'fp16' ? '--fp16' : undefined;
      const other = want === '--bf16' ? fp16 : want === '--fp16' ? bf16 : undefined;
      // Swapping one precision flag for the other keeps its place (and its line in an array).
      if (want && other && !find(want)) return [...noFp8, { start: other.start, end: other.end, newText: want }];
      return [...noFp8, ...set('--bf16', p === 'bf16'), ...set('--fp16', p === 'fp16')];
    },
  };
  // Megatron at bf16 accumulates and all-reduces gradients in an fp32 buffer unless --grad-reduce-in-bf16 (arguments.py
  // sets accumulate_allreduce_grads_in_fp32, "accumulate and all-reduce gradients in fp32 for bfloat16 data type"); at
  // fp16 only with --accumulate-allreduce-grads-in-fp32.
  const fp32Flag = find('--accumulate-allreduce-grads-in-fp32');
  const bf16Reduce = find('--grad-reduce-in-bf16');
  if (precision !== 'fp32') {
    const fp32Grads = !!fp32Flag || (!fp16 && !bf16Reduce);
    stated.ampStyle = fp32Grads
      ? { value: 'fp32-gradients', why: fp32Flag ? 'Megatron-LM --accumulate-allreduce-grads-in-fp32' : `Megatron-LM at ${precision}: gradients accumulated and all-reduced in fp32 (no --grad-reduce-in-bf16)` }
      : { value: 'master-weights', why: bf16Reduce ? 'Megatron-LM --grad-reduce-in-bf16' : 'Megatron-LM at fp16: 16-bit gradients, fp32 master weights' };
  }
  const seqLength = find('--seq-length');
  const seqValue = seqLength?.value && (seqLength.value.raw.startsWith('$') ? resolveReference(seqLength.value.raw, seqLength.value.start, assignments) : { value: seqLength.value.raw, start: seqLength.value.start, end: seqLength.value.end });
  if (seqValue && /^0*[1-9]\d*$/.test(seqValue.value.trim())) stated.tokensPerSample = { value: Number(seqValue.value), key: '--seq-length', range: { start: seqValue.start, end: seqValue.end } };
  // No --expert-model-parallel-size is Megatron's default 1; a plan that spreads experts writes the flag.
  stated.expertParallel ??= { value: 1, stated: false, range: anchor, set: (n: number) => (n > 1 ? add(`--expert-model-parallel-size ${n}`) : []) };
  // No --expert-tensor-parallel-size splits each expert over the attention's tensor ranks (arguments.py sets it to
  // --tensor-model-parallel-size): it follows a plan's TP, and a plan that keeps experts whole at TP > 1 writes the flag.
  stated.expertTensorParallel ??= {
    value: stated.tensorParallel?.value ?? 1, stated: false, range: anchor,
    matches: (etp, plan) => etp === (plan?.tensorParallel ?? stated.tensorParallel?.value ?? 1),
    set: (n: number, plan) => (n === plan?.tensorParallel ? [] : add(`--expert-tensor-parallel-size ${n}`)),
  };
  const sp = find('--sequence-parallel');
  // Megatron turns sequence parallel off at TP 1 (arguments.py: "Disabling sequence parallelism because tensor model
  // parallelism is disabled"): there the flag runs as no sequence parallel, which a TP-1 plan agrees with.
  const tp = stated.tensorParallel?.value ?? 1;
  stated.sequenceParallel = { value: !!sp && tp > 1, stated: !!sp, range: sp ?? anchor, set: (on) => set('--sequence-parallel', on) };
  // The same flag turns on when a fix raises TP past 1: a plan without sequence parallel drops it with the TP edit.
  const tpDim = stated.tensorParallel;
  if (sp && tp === 1 && tpDim?.set) {
    const setTp = tpDim.set;
    tpDim.set = (n, plan) => {
      const edits = setTp(n, plan);
      return edits && n > 1 && plan && !plan.sequenceParallel ? [...edits, ...drop(sp)] : edits;
    };
  }
  const gran = find('--recompute-granularity');
  const recompute: RecomputeMode = gran?.value ? (gran.value.raw === 'full' ? 'full' : 'selective') : find('--recompute-activations') ? 'selective' : 'none';
  stated.recompute = {
    value: recompute, stated: !!gran, range: gran?.value ?? anchor,
    set: (r) => (gran?.value ? (r === 'none' ? drop(gran) : [{ start: gran.value.start, end: gran.value.end, newText: r }]) : r === 'none' ? [] : add(`--recompute-granularity ${r}`)),
  };
  const dist = find('--use-distributed-optimizer');
  const sharded = megatronFsdp(find);
  if (sharded) {
    stated.zeroStage = { value: sharded.zero, stated: true, range: sharded.range, set: sharded.set };
    if (sharded.zero === 1 || sharded.zero === 2) stated.weightGather = sharded.torch ? FSDP_WEIGHT_GATHER : megatronWeightGather(!!find('--overlap-param-gather'));
  } else {
    // A plan's ZeRO-2/3 is Megatron-FSDP's strategy, written with the flags megatronExport.ts writes.
    const toFsdp = (z: ZeroStage): TextEdit[] => [...set('--use-distributed-optimizer', true), ...add(`--use-megatron-fsdp --data-parallel-sharding-strategy ${z === 3 ? 'optim_grads_params' : 'optim_grads'} --no-gradient-accumulation-fusion --ckpt-format fsdp_dtensor`)];
    stated.zeroStage = { value: (dist ? 1 : 0) as ZeroStage, stated: !!dist, range: dist ?? anchor, set: (z) => (z <= 1 ? set('--use-distributed-optimizer', z === 1) : toFsdp(z)) };
    if (dist) stated.weightGather = megatronWeightGather(!!find('--overlap-param-gather'));
  }
  stated.serialSync = megatronSerialSync(!!find('--overlap-grad-reduce'));
  // Megatron-Core builds a block's local experts as GroupedMLP (one grouped GEMM per projection) with
  // --moe-grouped-gemm, else SequentialMLP (one GEMM per expert in turn): megatron/core/transformer/moe/experts.py.
  stated.tokenDispatcher = megatronDispatcher(find('--moe-token-dispatcher-type')?.value?.raw);
  const routing = routingUnmodelled(find('--num-experts'), find('--moe-expert-capacity-factor'));
  if (routing) (stated.unmodelled ??= []).push(routing);
  stated.expertsKernel = find('--moe-grouped-gemm')
    ? { grouped: true, why: 'Megatron-LM --moe-grouped-gemm: GroupedMLP, one grouped GEMM per projection' }
    : { grouped: false, why: 'Megatron-LM without --moe-grouped-gemm: SequentialMLP, one GEMM per local expert' };
  // Megatron derives accumulation from --global-batch-size; with it stated, moving the micro-batch keeps the batch.
  if (stated.microBatch && stated.globalBatch) stated.gradientAccumulation = { value: 1, stated: false, range: anchor, set: () => [] };
  return stated;
}

/** Megatron-FSDP's --data-parallel-sharding-strategy values as ZeRO stages (its README: optim, optim_grads, optim_grads_params). */
const FSDP_STRATEGIES: ReadonlyArray<[string, ZeroStage]> = [['no_shard', 0], ['optim', 1], ['optim_grads', 2], ['optim_grads_params', 3]];

/**
 * Megatron's FSDP paths, where the launch takes one: Megatron-FSDP (`--use-megatron-fsdp`, before it
 * `--use-custom-fsdp`) shards as --data-parallel-sharding-strategy says (default no_shard), and `--use-torch-fsdp2`
 * wraps the model in PyTorch's fully_shard (ZeRO-3). A plan's stage is written back into the strategy where
 * Megatron-FSDP is on; torch FSDP2 runs only its one stage.
 */
function megatronFsdp(find: (name: string) => Flag | undefined): { zero: ZeroStage; torch: boolean; range: TextRange; set: (z: ZeroStage) => TextEdit[] | undefined } | undefined {
  const torch = find('--use-torch-fsdp2');
  if (torch) return { zero: 3, torch: true, range: torch, set: (z) => (z === 3 ? [] : undefined) };
  const on = find('--use-megatron-fsdp') ?? find('--use-custom-fsdp');
  if (!on) return undefined;
  const strategy = find('--data-parallel-sharding-strategy');
  const word = strategy?.value?.raw ?? 'no_shard';
  const zero = FSDP_STRATEGIES.find(([w]) => w === word)?.[1];
  if (zero === undefined) return undefined;
  const value = strategy?.value;
  const set = (z: ZeroStage): TextEdit[] => {
    const next = FSDP_STRATEGIES.find(([, stage]) => stage === z)![0];
    return value ? [{ start: value.start, end: value.end, newText: next }] : [{ start: on.end, end: on.end, newText: ` --data-parallel-sharding-strategy ${next}` }];
  };
  return { zero, torch: false, range: value ?? on, set };
}

export const megatronReader: ConfigReader = {
  format: 'megatron',
  detect(fileName, text) {
    return isLaunchScriptName(fileName, text) && /--tensor-model-parallel-size|--pipeline-model-parallel-size/.test(text);
  },
  check(fileName, text, plan) {
    const setup = plan && readMegatronSetup(fileName, text);
    return setup ? compareSetup('megatron', text, setup, plan) : [];
  },
  readSetup: readMegatronSetup,
};

/**
 * Megatron-LM's --moe-token-dispatcher-type (arguments.py: default 'allgather', "We recommend using 'alltoall' when
 * applying expert parallelism"). 'flex' runs DeepEP's or HybridEP's fused all-to-all, and 'alltoall_seq' an older
 * all-to-all: both move each token to its top-k experts' ranks, priced as the all-to-all.
 */
function megatronDispatcher(raw: string | undefined): { kind: TokenDispatcher; why: string } {
  const value = raw?.replace(/^['"]|['"]$/g, '');
  if (value === undefined) return { kind: 'allgather', why: 'Megatron-LM without --moe-token-dispatcher-type: its default allgather' };
  if (value === 'allgather') return { kind: 'allgather', why: 'Megatron-LM --moe-token-dispatcher-type allgather' };
  const fused = value === 'flex' ? ', DeepEP/HybridEP\'s fused kernels priced as a plain all-to-all' : '';
  return { kind: 'alltoall', why: `Megatron-LM --moe-token-dispatcher-type ${value}${fused}` };
}

/**
 * Megatron's MoE routing as WAP cannot price it: every expert is priced at its balanced share of the tokens. Without
 * --moe-expert-capacity-factor Megatron routes dropless (arguments.py: None, "no token will be dropped"), so the busiest
 * expert sets the pace; with one, an expert takes up to that factor times its share before tokens are dropped.
 */
function routingUnmodelled(experts: Flag | undefined, capacity: Flag | undefined): { range: TextRange; message: string; short: string } | undefined {
  if (!experts) return undefined;
  const at: TextRange = { start: (capacity ?? experts).start, end: (capacity ?? experts).value?.end ?? (capacity ?? experts).end };
  if (!capacity) return { range: at, short: 'dropless routing imbalance not modelled', message: 'MoE routes dropless here (no --moe-expert-capacity-factor): the busiest expert sets each step\'s pace, and WAP prices every expert at its balanced share of the tokens (step time under-stated; Megatron-MoE-ModelZoo measures forced balance 1.24x faster than dropless on Qwen3-235B)' };
  return { range: at, short: 'expert capacity not modelled', message: `--moe-expert-capacity-factor ${capacity.value?.raw ?? ''}: an expert takes up to that factor times its balanced share of the tokens before dropping; WAP prices the balanced share (step time under-stated by up to that factor on the experts)` };
}
