/**
 * The dtype a script loads its model's parameters in:
 * `AutoModelForCausalLM.from_pretrained(…, torch_dtype=torch.bfloat16)` (or
 * `dtype=`, transformers' newer name). Parameters loaded in 16 bits train in
 * 16 bits: their gradients and torch's optimizer state take their dtype, and
 * autocast (the Trainer's `bf16=True`, accelerate's mixed precision) casts
 * activations, not parameters. So the plan holds everything in 16 bits
 * (AmpStyle 'pure'), half the model state of fp32 master weights, unless
 * DeepSpeed, which keeps its own fp32 master copy, says otherwise.
 * peft's `prepare_model_for_kbit_training(model)` (QLoRA) then casts every
 * 16-bit parameter bitsandbytes did not quantize (embeddings, norms, the head)
 * to fp32: those train and are held as fp32 under autocast ('autocast').
 * A load behind a flag, or a dtype WAP cannot read, gives no hint.
 */
import { MAX_CONFIG_CHARS } from './check';
import { firstPythonHint } from './firstHint';
import type { PrecisionHint } from './precisionHint';
import { sixteenBitDtype } from './torchAmp';
import { callArgs, findCalls, guardOf, pythonReady, withPythonTree } from './python';

function fromPython(name: string, text: string): PrecisionHint | undefined {
  if (!pythonReady() || !/from_pretrained/.test(text) || !/\b(torch_)?dtype\s*=/.test(text)) return undefined;
  return withPythonTree(text, (root) => {
    for (const call of root.descendantsOfType('call')) {
      const fn = call?.childForFieldName('function')?.text ?? '';
      if (!call || !/(^|\.)from_pretrained$/.test(fn) || guardOf(call)) continue;
      const keywords = callArgs(call)?.keywords;
      const dtype = keywords?.get('torch_dtype') ?? keywords?.get('dtype');
      const precision = dtype ? sixteenBitDtype(dtype.text) : undefined;
      if (!precision) continue;
      const where = `${name}:${call.startPosition.row + 1} (${fn}(… ${dtype!.text} …))`;
      const prepare = findCalls(root, 'prepare_model_for_kbit_training').find((c) => !guardOf(c));
      if (prepare) {
        const at = `${name}:${prepare.startPosition.row + 1} (prepare_model_for_kbit_training)`;
        return { precision, source: where, ampStyle: 'autocast', ampStyleSource: `${at}: it casts the parameters bitsandbytes does not quantize from ${precision} to fp32, so they train in fp32 under autocast` };
      }
      return { precision, source: where, ampStyle: 'pure', ampStyleSource: `${where}: parameters loaded in ${precision} keep their gradients and optimizer state in ${precision}` };
    }
    return undefined;
  });
}

/** The 16-bit dtype the model's own file (then the others) loads the model in. */
export function loadDtypeHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): PrecisionHint | undefined {
  return firstPythonHint(files, modelFile, MAX_CONFIG_CHARS, fromPython);
}

/**
 * The precision hint once the load dtype is known: a model loaded in 16 bits holds its state in 16 bits (its dtype,
 * 'pure'), whatever autocast a Trainer or accelerate config adds, unless DeepSpeed keeps fp32 master weights.
 */
export function withLoadDtype(config: PrecisionHint | undefined, load: PrecisionHint | undefined): PrecisionHint | undefined {
  if (!load || config?.ampStyle === 'master-weights') return config;
  return load;
}
