/**
 * Quantized loading as a fine-tuning script writes it:
 * `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
 * bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16)`
 * passed as `from_pretrained(..., quantization_config=...)`, or the older
 * `load_in_4bit=True` / `load_in_8bit=True` keywords. What is read becomes
 * the model's bitsandbytes settings (../quantization/bitsandbytes.ts applies
 * them to its graph); a quantization WAP cannot read (GPTQ, AWQ, a config it
 * cannot compute) stays a warning every plan repeats.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import type { BitsAndBytesSettings } from '../quantization/bitsandbytes';
import { namedDtype } from './casts';
import { dictOf, namedEntries, str, truthy, type CallSite, type Value } from './values';

const BNB_TYPE = '__bitsandbytes_config__';

/** `BitsAndBytesConfig(...)`: its keywords as a dict, tagged so from_pretrained knows what it holds. */
export function bitsAndBytesConfig(kwargs: Map<string, Value>): Value {
  return dictOf([...kwargs, [BNB_TYPE, str('bitsandbytes')]]);
}

/** from_pretrained's quantization: bitsandbytes settings WAP models, a warning for one it does not, or neither. */
export function quantizationOf(kwargs: Map<string, Value>, site: CallSite): { settings?: BitsAndBytesSettings; note?: Diagnostic } {
  const given = (v: Value | undefined): boolean => v !== undefined && v.k !== 'none' && !(v.k === 'bool' && !v.v);
  const config = kwargs.get('quantization_config');
  if (given(config)) {
    const entries = new Map(namedEntries(config!) ?? []);
    const settings = entries.has(BNB_TYPE) ? bitsAndBytesSettings(entries, 'quantization_config', site.range) : undefined;
    return settings ? { settings } : { note: unmodelled('quantization_config', site.range) };
  }
  for (const how of ['load_in_4bit', 'load_in_8bit']) {
    if (!given(kwargs.get(how))) continue;
    // The deprecated keywords: transformers builds a BitsAndBytesConfig from them and the bnb_4bit_* beside them.
    const settings = bitsAndBytesSettings(kwargs, how, site.range);
    return settings ? { settings } : { note: unmodelled(how, site.range) };
  }
  return {};
}

/** BitsAndBytesConfig's keywords, with transformers' defaults; undefined when one WAP needs is unreadable. */
function bitsAndBytesSettings(entries: Map<string, Value>, how: string, range: SourceRange): BitsAndBytesSettings | undefined {
  const flag = (key: string): boolean | undefined => {
    const v = entries.get(key);
    return v === undefined || v.k === 'none' ? false : truthy(v);
  };
  const four = flag('load_in_4bit');
  const eight = flag('load_in_8bit');
  const doubleQuant = flag('bnb_4bit_use_double_quant');
  if (four === undefined || eight === undefined || doubleQuant === undefined || four === eight) return undefined;
  const type = entries.get('bnb_4bit_quant_type');
  const quantType = type === undefined || type.k === 'none' ? 'fp4' : type.k === 'str' && (type.v === 'nf4' || type.v === 'fp4') ? type.v : undefined;
  if (!quantType) return undefined;
  const skip = entries.get('llm_int8_skip_modules');
  const skipModules = skip === undefined || skip.k === 'none' ? [] : skip.k === 'list' || skip.k === 'tuple' ? skip.items.map((i) => (i.k === 'str' ? i.v : undefined)) : [undefined];
  if (skipModules.includes(undefined)) return undefined;
  const computeDtype = dtypeOf(entries.get('bnb_4bit_compute_dtype'));
  if (computeDtype === null) return undefined;
  return {
    format: eight ? 'int8' : quantType,
    ...(four && doubleQuant ? { doubleQuant: true } : {}),
    skipModules: skipModules as string[],
    ...(computeDtype ? { computeDtype } : {}),
    how,
    range,
  };
}

/** `torch.bfloat16` or "bfloat16"; undefined when not given, null when given but not a 16- or 32-bit float. */
function dtypeOf(v: Value | undefined): 'fp32' | 'fp16' | 'bf16' | undefined | null {
  if (v === undefined || v.k === 'none') return undefined;
  const dtype = namedDtype(v);
  return dtype === undefined || dtype === 'fp64' ? null : dtype;
}

function unmodelled(how: string, r: SourceRange): Diagnostic {
  return {
    severity: 'warning',
    code: 'quantized-weights',
    carriesToPlan: true,
    line: r.line,
    column: r.column,
    endLine: r.endLine,
    endColumn: r.endColumn,
    message: `The model is loaded with quantized weights (${how}) in a way WAP does not model (it reads bitsandbytes' BitsAndBytesConfig with literal settings): it plans the weights at the training precision, so their memory is over-stated (a 4-bit base, as QLoRA loads it, holds about a quarter of 16-bit weights, an 8-bit one half) and the dequantisation before each matmul is not priced`,
  };
}
