/**
 * torch's mixed-precision words as training code writes them: dtype names (`torch.bfloat16`, transformers' string
 * "bfloat16") and the autocast context managers (`torch.autocast`, `torch.amp.autocast`, `torch.cuda.amp.autocast`).
 * Shared by the precision hint (the model's default precision) and the plain-PyTorch script reader (the precision
 * "your config" trains in), so both read an autocast call alike.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision } from '../protocol/plan';
import { callArgs, stringLiteral } from './python';

/** torch's 16-bit dtypes as code names them (`torch.bfloat16`, or transformers' string `"bfloat16"`). */
const SIXTEEN_BIT: Readonly<Record<string, Precision>> = { bfloat16: 'bf16', float16: 'fp16', half: 'fp16' };

const dtypeName = (text: string): string | undefined => /^(?:torch\.)?(\w+)$/.exec(text.replace(/\s+|["']/g, ''))?.[1];

/** The 16-bit precision a dtype expression names; undefined for anything else. */
export function sixteenBitDtype(text: string): Precision | undefined {
  const name = dtypeName(text);
  return name !== undefined && Object.prototype.hasOwnProperty.call(SIXTEEN_BIT, name) ? SIXTEEN_BIT[name] : undefined;
}

/**
 * The precision a torch dtype written in code names (`torch.bfloat16`, `torch.float32`), or undefined for an
 * expression (nanoGPT's `ptdtype`, a function's `param_dtype` parameter): the run's choice, which WAP does not guess.
 */
export function torchDtypePrecision(n: Node): Precision | undefined {
  if (n.type !== 'attribute' || !/^torch\.\w+$/.test(n.text.replace(/\s+/g, ''))) return undefined;
  const name = dtypeName(n.text);
  return name === 'float32' || name === 'float' ? 'fp32' : sixteenBitDtype(n.text);
}

/** How code writes a precision's dtype, through the module name `torch` is imported as; fp8 has no autocast dtype. */
export function torchDtypeText(p: Precision, torch: string): string | undefined {
  const name = p === 'bf16' ? 'bfloat16' : p === 'fp16' ? 'float16' : p === 'fp32' || p === 'tf32' ? 'float32' : undefined;
  return name && `${torch}.${name}`;
}

const AUTOCAST = /^((torch\.)?(cuda\.)?amp\.|torch\.)?autocast$/;

/**
 * What one autocast call says: a CUDA autocast that certainly runs, with its precision and the dtype argument that
 * says it (absent: CUDA autocast's default, float16); 'off' for one that changes nothing on a GPU (`enabled=False`,
 * a CPU autocast); 'run' where the run decides (`enabled=args.amp`, `**kwargs`, a device or dtype expression).
 * Undefined when the call is not an autocast.
 */
export type AutocastReading = { precision: Precision; dtype?: Node; cudaOnly: boolean } | 'off' | 'run';

export function readAutocast(call: Node, text: string): AutocastReading | undefined {
  const fn = call.childForFieldName('function');
  if (!fn || !AUTOCAST.test(fn.text.replace(/\s+/g, ''))) return undefined;
  const args = callArgs(call);
  if (!args || args.list.namedChildren.some((a) => a?.type === 'dictionary_splat')) return 'run';
  const enabled = args.keywords.get('enabled');
  if (enabled && enabled.type === 'false') return 'off';
  if (enabled && enabled.type !== 'true') return 'run';
  // torch.cuda.amp.autocast (also imported bare: the AMP tutorial's `from torch.cuda.amp import autocast`) is CUDA's
  // and takes `enabled` first; torch.autocast and torch.amp.autocast take the device type, then the dtype.
  const cudaOnly = fn.text.includes('cuda') || (fn.text === 'autocast' && /from\s+torch\.cuda\.amp\s+import[^\n]*\bautocast\b/.test(text));
  const first = args.positional[0];
  if (cudaOnly && first && first.type !== 'true') return first.type === 'false' ? 'off' : 'run';
  // torch.cuda.amp.autocast(True, torch.bfloat16): a positional dtype WAP does not read.
  if (cudaOnly && args.positional.length > 1) return 'run';
  const device = args.keywords.get('device_type') ?? (cudaOnly ? undefined : first);
  const deviceName = cudaOnly ? 'cuda' : device && stringLiteral(device);
  if (deviceName === undefined) return 'run';
  if (deviceName !== 'cuda') return 'off';
  const dtype = args.keywords.get('dtype') ?? (cudaOnly ? undefined : args.positional[1]);
  if (!dtype) return { precision: 'fp16', cudaOnly };
  const p = sixteenBitDtype(dtype.text);
  return p ? { precision: p, dtype, cudaOnly } : 'run';
}
