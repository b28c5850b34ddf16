/**
 * Which layers a part of a transformers model is, and which of the call's arguments feeds each tensor those layers
 * take from outside it (transformersCalls.ts records them). Most parts take one tensor (a stack its embeddings, a
 * head the last hidden state) and are fed the call's first argument. An encoder–decoder's decoder called on its own
 * takes two: its token ids and the encoder's output (`self.t5.decoder(input_ids=dec_ids,
 * encoder_hidden_states=enc.last_hidden_state)`). Each is matched to the argument transformers' forward reads it
 * from: T5Stack.forward (modeling_t5.py) and BartDecoder.forward (modeling_bart.py; WhisperDecoder's is a copy) are
 * `forward(input_ids, attention_mask, encoder_hidden_states, …)`, so the ids are the first positional or `input_ids`,
 * the encoder's output the third positional or `encoder_hidden_states`. What no argument feeds, or two tensors would
 * read from one argument, is said and the part is not recorded.
 */
import type { LayerSpec } from '../../core/ir';
import type { HfModelSpec } from '../huggingface/registry';
import type { TensorV, Value } from './values';

/**
 * The layers of the part at `path`. A layer named exactly `path` is a torch leaf module (a Linear, a Dropout), which
 * has no submodules: the part is that one module, called once, whatever the catalogue names under it (T5's
 * `lm_head.rescale`, the d_model^-0.5 scaling T5ForConditionalGeneration.forward applies before its lm_head: t5.ts)
 * and however often the model applies it (T5Stack's `dropout`, on the embeddings and on the stack's output).
 */
export function partLayers(layers: readonly LayerSpec[], path: string): LayerSpec[] {
  const module = layers.find((l) => l.name === path);
  if (module) return [module];
  return layers.filter((l) => l.name.startsWith(`${path}.`));
}

/** Keywords a part's forward names the one tensor it takes: a block's hidden_states, a stack's or embeddings' ids, pixels, a head's features. */
const ONE_TENSOR_KEYWORDS = ['hidden_states', 'input_ids', 'pixel_values', 'features'];

/** What a part's layers take from outside it, how the call may pass it, and how to name it when it does not. */
interface OutsideTensor {
  id: string;
  what: string;
  keywords: readonly string[];
  /** The forward's positional parameter that takes it, where the part's class fixes one. */
  position?: number;
}

/** Where a part stands in the model it comes from: its path, the layers it takes tensors from, and the encoder stack's path. */
export interface PartContext {
  spec: HfModelSpec;
  path: string;
  /** The encoder–decoder's encoder stack (`encoder`, `model.encoder`), undefined for a model with no such stack. */
  encoderPath?: string;
}

/**
 * The call's tensor for each id the part takes from outside (`external`), or why the call cannot be matched: an
 * argument missing, two tensors read from one argument, or a value the evaluator could not compute.
 */
export function matchPartInputs(part: PartContext, external: readonly string[], args: Value[], kwargs: Map<string, Value>): Map<string, TensorV> | { unread: string } {
  if (external.length === 1) {
    const given = args[0] ?? ONE_TENSOR_KEYWORDS.map((k) => kwargs.get(k)).find((v) => v !== undefined);
    if (given?.k !== 'tensor' || !given.id) return { unread: 'is called on a value the evaluator could not compute' };
    return new Map([[external[0]!, given]]);
  }
  const wanted = external.map((id) => outsideTensor(part, id));
  const claims = new Map<number, OutsideTensor[]>();
  for (const w of wanted) if (w.position !== undefined) claims.set(w.position, [...(claims.get(w.position) ?? []), w]);
  const fed = new Map<string, TensorV>();
  const problems: string[] = [];
  for (const w of wanted) {
    const keyword = w.keywords.find((k) => kwargs.has(k));
    const sharing = w.position === undefined ? [] : claims.get(w.position)!;
    const positional = w.position !== undefined && sharing.length === 1 ? args[w.position] : undefined;
    const given = keyword ? kwargs.get(keyword) : positional;
    if (given === undefined) {
      const ambiguous = w.position !== undefined && sharing.length > 1 && args[w.position] !== undefined;
      problems.push(ambiguous ? `${sharing.map((s) => s.what).join(' and ')} would both be read from its argument ${w.position! + 1}` : `${w.what} is not passed${kwargs.has('inputs_embeds') && w.keywords.includes('input_ids') ? ' (it passes inputs_embeds, which WAP does not read)' : ''}`);
    } else if (given.k !== 'tensor' || !given.id) problems.push(`${w.what} is a value the evaluator could not compute`);
    else fed.set(w.id, given);
  }
  if (problems.length) return { unread: `takes ${external.length} tensors from outside it, which WAP cannot match to the call's arguments: ${[...new Set(problems)].join('; ')}` };
  return fed;
}

/**
 * One outside tensor's role. A model input (token ids) is passed under its own name, less the `decoder_` the whole
 * model's forward adds (T5ForConditionalGeneration's decoder_input_ids are its decoder's input_ids); the encoder
 * stack's output is `encoder_hidden_states`; anything else is the hidden state a block or stack continues from.
 */
function outsideTensor(part: PartContext, id: string): OutsideTensor {
  const stack = part.path.split('.').pop() === 'decoder';
  const input = part.spec.inputs.find((i) => i.id === id);
  if (input) {
    const name = input.id.replace(/^decoder_/, '');
    return { id, what: `\`${input.id}\` (the call's \`${name}\`)`, keywords: [name], position: 0 };
  }
  const producer = part.spec.layers.find((l) => l.id === id);
  const encoder = part.encoderPath;
  if (producer && encoder && (producer.name === encoder || producer.name.startsWith(`${encoder}.`))) {
    return { id, what: "the encoder's output (the call's `encoder_hidden_states`)", keywords: ['encoder_hidden_states'], ...(stack ? { position: 2 } : {}) };
  }
  return { id, what: `the hidden state from \`${producer?.name ?? id}\` (the call's \`hidden_states\`)`, keywords: ['hidden_states'], position: 0 };
}
