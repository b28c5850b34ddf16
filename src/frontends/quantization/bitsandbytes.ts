/**
 * A model loaded in 4 or 8 bits through transformers' bitsandbytes
 * integration (`from_pretrained(..., quantization_config=BitsAndBytesConfig(
 * load_in_4bit=True, bnb_4bit_quant_type="nf4", ...))`, QLoRA's recipe), as an
 * IR rewrite: transformers replaces every nn.Linear with a bitsandbytes layer
 * except its output head (the last module the model registers:
 * `get_keys_to_not_convert`, e.g. `lm_head`, `classifier`) and the modules
 * `llm_int8_skip_modules` names. Those Linears get `quantizedWeights` and are
 * frozen (bitsandbytes' quantized parameters do not require grad); embeddings
 * and norms stay at the load dtype. core/quantizedWeights.ts counts the bytes,
 * the planner the dequantization before each matmul.
 */
import type { Diagnostic, LayerSpec, ModelSpec, QuantizedWeights, SourceRange } from '../../core/ir';
import { torchParameterNames } from '../freezing/parameterNames';

/** What a BitsAndBytesConfig (or from_pretrained's load_in_4bit / load_in_8bit) asks for. */
export interface BitsAndBytesSettings extends QuantizedWeights {
  /** Module names left unquantized (llm_int8_skip_modules), besides the head transformers always keeps. */
  skipModules: string[];
  /** bnb_4bit_compute_dtype as given; undefined when not given (transformers then computes in fp32). */
  computeDtype?: 'fp32' | 'fp16' | 'bf16';
  /** How the code asked for it ('quantization_config', 'load_in_4bit'), for messages. */
  how: string;
  range: SourceRange;
}

const diagnosticAt = (severity: Diagnostic['severity'], code: string, message: string, r: SourceRange): Diagnostic => ({ severity, code, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, carriesToPlan: true });

/** The model with its Linears (but the head and the skipped modules) stored quantized and frozen. */
export function withQuantizedWeights(spec: ModelSpec, q: BitsAndBytesSettings): ModelSpec {
  const weighted = spec.layers.filter((l) => (torchParameterNames(l.op, l.attrs)?.length ?? 0) > 0);
  // transformers keeps the model's last registered child in full precision (the head): the last top-level module in graph order.
  const head = weighted.length ? weighted[weighted.length - 1].name.split('.')[0] : undefined;
  // transformers' test for modules_to_not_convert: the name is the module's path, or one of its parents ends with it.
  const kept = (l: LayerSpec): boolean => l.name.split('.')[0] === head || q.skipModules.some((m) => l.name === m || l.name.includes(`${m}.`));
  const format: QuantizedWeights = { format: q.format, ...(q.doubleQuant ? { doubleQuant: true } : {}) };
  let count = 0;
  const layers = spec.layers.map((l) => {
    if (l.op !== 'linear' || kept(l)) return l;
    count++;
    return { ...l, frozen: true, quantizedWeights: format };
  });
  const diagnostics: Diagnostic[] = [];
  const what = q.format === 'int8' ? 'LLM.int8() (8-bit)' : `4-bit ${q.format.toUpperCase()}${q.doubleQuant ? ' with double quantization' : ''}`;
  const skipped = [head, ...q.skipModules].filter((m) => m !== undefined).join(', ');
  diagnostics.push(
    diagnosticAt(
      'info',
      'quantized-weights',
      `bitsandbytes ${what} (${q.how}) on ${count} Linear layers (not ${skipped}): their weights are held quantized and frozen, and each matmul dequantizes its weight to the compute dtype first${q.format === 'int8' ? " (LLM.int8()'s int8 forward with fp16 outliers is priced as that too)" : ''}`,
      q.range,
    ),
  );
  if (q.format !== 'int8' && (q.computeDtype === undefined || q.computeDtype === 'fp32')) {
    diagnostics.push(
      diagnosticAt(
        'warning',
        'quantized-compute-dtype',
        `bnb_4bit_compute_dtype is ${q.computeDtype === undefined ? 'not set, so transformers uses float32' : 'float32'}: bitsandbytes then casts each input to fp32 and runs these matmuls in fp32, which WAP does not price (it plans them at the training precision); QLoRA sets bnb_4bit_compute_dtype=torch.bfloat16`,
        q.range,
      ),
    );
  }
  if (count === 0) diagnostics.push(diagnosticAt('warning', 'quantized-weights-none', `bitsandbytes quantizes no Linear layer of ${spec.name} (all are the head or skipped): nothing is planned quantized`, q.range));
  return { ...spec, layers, diagnostics: [...spec.diagnostics, ...diagnostics] };
}
