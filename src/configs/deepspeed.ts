/**
 * DeepSpeed config JSON. DeepSpeed requires
 *   train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel world size
 * and derives a missing one of the three from the others; a mismatch stops the run at start-up,
 * after the cluster has been allocated. The world size is not in the file: it comes from the plan.
 */
import type { Node } from 'jsonc-parser';
import type { PlanReport } from '../protocol/plan';
import { compareLaunch } from './compare';
import { deepspeedEnabled, readDeepspeedSetup } from './deepspeedSetup';
import { changeBatchFix, compareSetup, setupNotes } from './setup';
import { parseJsonConfig, rangeOf, setJsonValue, valueAt } from './jsonDoc';
import { namesTrainerArguments } from './recipeDetect';
import { MalformedConfig, type ConfigFinding, type ConfigReader, type ConfigValue, type TextRange } from './types';

const BATCH_KEYS = ['train_batch_size', 'train_micro_batch_size_per_gpu', 'gradient_accumulation_steps'] as const;

/** A positive integer, 'auto' (the HF Trainer fills it in), or absent. */
function readBatchField(text: string, root: Node, key: string): ConfigValue<number> | 'auto' | undefined {
  const node = valueAt(root, [key]);
  if (!node || node.type === 'null') return undefined;
  if (node.type === 'string' && node.value === 'auto') return 'auto';
  if (node.type !== 'number' || !Number.isInteger(node.value) || node.value < 1) {
    throw new MalformedConfig(`${key} must be a positive whole number or "auto", got ${text.slice(node.offset, node.offset + Math.min(node.length, 40))}`, rangeOf(node));
  }
  return { value: node.value, range: rangeOf(node), set: (n) => setJsonValue(text, [key], n) };
}

function readZeroStage(text: string, root: Node): ConfigValue<number> | undefined {
  const zero = valueAt(root, ['zero_optimization']);
  if (!zero) return undefined;
  if (zero.type !== 'object') throw new MalformedConfig('zero_optimization must be an object', rangeOf(zero));
  const node = valueAt(root, ['zero_optimization', 'stage']);
  if (!node) return undefined;
  if (node.type !== 'number' || !Number.isInteger(node.value)) {
    throw new MalformedConfig(`zero_optimization.stage must be 0, 1, 2 or 3, got ${text.slice(node.offset, node.offset + Math.min(node.length, 40))}`, rangeOf(node));
  }
  return { value: node.value, range: rangeOf(node) };
}

/**
 * DeepSpeed's data-parallel world size under the plan: pipeline stages do not count, and in a block-stack plan
 * (DP × TP × PP × CP over every GPU, Megatron-DeepSpeed's layout) neither do tensor or context ranks, which see the
 * same samples. A per-layer plan's model parallelism is nothing DeepSpeed runs (the export says so): its GPUs ÷ stages.
 */
export function deepspeedWorld(plan: PlanReport): number {
  const s = plan.plan.setup;
  if (s && plan.search?.method === 'parallel3d' && s.dataParallel * s.tensorParallel * s.pipelineStages * s.contextParallel === plan.plan.gpus) return s.dataParallel;
  const stages = plan.plan.pipeline?.stages ?? 1;
  return Math.max(1, Math.floor(plan.plan.gpus / stages));
}

export const deepspeedReader: ConfigReader = {
  format: 'deepspeed',
  readSetup(_fileName, text) {
    return readDeepspeedSetup(text, parseJsonConfig(text));
  },
  detect(fileName, text) {
    // A Trainer recipe in JSON may hold a DeepSpeed config inline: the recipe's reader reads it (trainerRecipe.ts).
    return /\.jsonc?$/i.test(fileName) && /"(train_batch_size|train_micro_batch_size_per_gpu|zero_optimization)"\s*:/.test(text) && !namesTrainerArguments(text);
  },
  check(_fileName, text, plan) {
    const root = parseJsonConfig(text);
    const [train, micro, accum] = BATCH_KEYS.map((k) => readBatchField(text, root, k));
    const stage = readZeroStage(text, root);
    const findings: ConfigFinding[] = [];
    if (stage && (stage.value < 0 || stage.value > 3)) {
      findings.push({ format: 'deepspeed', severity: 'error', code: 'unknown-value', range: stage.range, message: `zero_optimization.stage ${stage.value} does not exist; DeepSpeed has stages 0-3` });
    }
    for (const key of ['bf16', 'fp16'] as const) {
      if (deepspeedEnabled(root, key) !== 'unreadable') continue;
      const node = valueAt(root, [key, 'enabled'])!;
      findings.push({
        format: 'deepspeed', severity: 'error', code: 'unknown-value', range: rangeOf(node),
        message: `${key}.enabled must be true or false, got ${text.slice(node.offset, node.offset + Math.min(node.length, 40))}: DeepSpeed's config validation refuses it, and WAP cannot tell which precision this config trains in`,
      });
    }
    const setup = readDeepspeedSetup(text, root);
    // The setup fix also moves micro-batch and accumulation at the config's own batch, so it goes first.
    const setupFindings = plan ? compareSetup('deepspeed', text, setup, plan) : setupNotes('deepspeed', setup);
    findings.push(...setupFindings);
    if (!setupFindings.some((f) => f.fix)) findings.push(...checkBatchArithmetic(train, micro, accum, plan));
    if (plan && train && train !== 'auto' && train.value !== plan.batch) {
      findings.push({
        format: 'deepspeed', severity: 'info', code: 'batch-differs', range: train.range, fix: changeBatchFix(setup, plan),
        message: `The plan was made for a global batch of ${plan.batch}; this config trains with ${train.value}, so memory and step time differ from the plan`,
      });
    }
    if (plan) {
      const anchor: TextRange = stage?.range ?? (train !== 'auto' && train ? train.range : { start: root.offset, end: root.offset + 1 });
      const kind = stage && stage.value > 0 ? 'sharded' : 'data';
      findings.push(...compareLaunch('deepspeed', { parallelism: { value: kind, range: anchor } }, plan, () => ''));
    }
    return findings;
  },
};

type Field = ConfigValue<number> | 'auto' | undefined;
const known = (f: Field): f is ConfigValue<number> => f !== undefined && f !== 'auto';

function checkBatchArithmetic(train: Field, micro: Field, accum: Field, plan: PlanReport | undefined): ConfigFinding[] {
  if (!known(train)) return [];
  const T = train.value;
  const G = known(accum) ? accum.value : undefined;
  const M = known(micro) ? micro.value : undefined;
  const finding = (severity: ConfigFinding['severity'], code: string, message: string, fix?: ConfigFinding['fix']): ConfigFinding[] =>
    [{ format: 'deepspeed', severity, code, message, range: train.range, fix }];

  if (!plan) {
    if (M === undefined || G === undefined) return [];
    if (T % (M * G) !== 0) {
      return finding('error', 'batch-arithmetic', `train_batch_size ${T} is not micro ${M} × accum ${G} × any world size: ${T} is not a multiple of ${M * G}`);
    }
    return finding('info', 'batch-unchecked', `train_batch_size ${T} = ${M} × ${G} × world holds only on ${T / (M * G)} GPU(s); WAP cannot check the world size without a model plan (wap config --model …)`);
  }
  const W = deepspeedWorld(plan);
  const worldText = `world ${W} (from the plan)`;
  if (M !== undefined && G !== undefined) {
    if (M * G * W === T) return [];
    const message = `train_batch_size ${T} ≠ micro ${M} × accum ${G} × ${worldText} = ${M * G * W}`;
    // Keep the global batch (the tuned hyperparameter) when the accumulation steps can absorb the change.
    if (known(accum) && T % (M * W) === 0) {
      return finding('error', 'batch-arithmetic', message, { title: `Set gradient_accumulation_steps to ${T / (M * W)} (keeps train_batch_size ${T})`, edits: accum.set!(T / (M * W)), preferred: true });
    }
    return finding('error', 'batch-arithmetic', message, { title: `Set train_batch_size to ${M * G * W}`, edits: train.set!(M * G * W), preferred: true });
  }
  // An absent field is derived by DeepSpeed and an "auto" one filled in by the HF Trainer; either way
  // a fixed train_batch_size must be a multiple of the known factors, or no whole value fits.
  if (M !== undefined && T % (M * W) !== 0) {
    const how = accum === 'auto' ? 'no whole gradient_accumulation_steps can fill in "auto"' : 'DeepSpeed cannot derive gradient_accumulation_steps';
    return finding('error', 'batch-arithmetic', `train_batch_size ${T} is not a multiple of micro ${M} × ${worldText}, so ${how}`,
      { title: `Set train_batch_size to ${M * W * Math.max(1, Math.round(T / (M * W)))}`, edits: train.set!(M * W * Math.max(1, Math.round(T / (M * W)))), preferred: true });
  }
  if (M === undefined && T % ((G ?? 1) * W) !== 0) {
    // DeepSpeed takes a missing accumulation as 1; an "auto" one could be anything, so then only the world must divide.
    const G1 = G ?? 1;
    const fixed = G1 * W * Math.max(1, Math.round(T / (G1 * W)));
    const how = micro === 'auto' ? 'no whole micro-batch per GPU can fill in "auto"' : 'DeepSpeed cannot derive the micro-batch per GPU';
    const factors = accum === 'auto' ? worldText : `accum ${G1} × ${worldText}`;
    return finding('error', 'batch-arithmetic', `train_batch_size ${T} is not a multiple of ${factors}, so ${how}`,
      { title: `Set train_batch_size to ${fixed}`, edits: train.set!(fixed), preferred: true });
  }
  return [];
}
