/**
 * transformers' building blocks a script builds itself from a config, as research code assembles models out of them:
 * `nn.ModuleList([BertLayer(config) for _ in range(n)])`, `LlamaDecoderLayer(config, layer_idx=i)`, `BertEmbeddings`,
 * `BertPooler`, `GPT2Block`, a masked-LM head (`RobertaLMHead`), RoBERTa's classification head. Each is the part of the catalogue's model
 * (../huggingface) at the path transformers puts it (`encoder.layer.0`, `layers.0`, `h.0`): a module value whose
 * layers are recorded where forward calls it (transformersCalls.ts), named from the attribute that holds it. A block's
 * model is built one block deep.
 */
import { prefixModelType, type HfConfig, type HfHead } from '../huggingface/configs';
import type { CallSite, HfV, Value } from './values';

/** A part class by its name's suffix, for the families that name it so; `head`: the model it lives in. */
interface PartEntry {
  suffix: string;
  families: readonly string[];
  path: string;
  head?: HfHead;
}

/** Where each family keeps its first block, by the class-name suffix of the block. */
const BLOCK_PATHS: readonly PartEntry[] = [
  { suffix: 'DecoderLayer', families: ['llama', 'mistral', 'mixtral', 'qwen2', 'qwen3', 'qwen3_moe', 'gemma', 'gemma2', 'phi3'], path: 'layers.0' },
  { suffix: 'Layer', families: ['bert', 'roberta', 'xlm-roberta', 'camembert', 'vit'], path: 'encoder.layer.0' },
  { suffix: 'Layer', families: ['gpt_neox'], path: 'layers.0' },
  { suffix: 'Block', families: ['gpt2'], path: 'h.0' },
];

/**
 * The encoder-side parts BERT's family and ViT name the same way, and the heads WAP builds as the head models hold
 * them: the masked-LM heads (RobertaLMHead, BertLMPredictionHead) and RoBERTa's sequence-classification head.
 * RobertaClassificationHead(config) (modeling_roberta.py: dense hidden→hidden, dropout, tanh, dropout, out_proj
 * hidden→num_labels on `features[:, 0, :]`, the dropout classifier_dropout or else hidden_dropout_prob) is
 * RobertaForSequenceClassification's `classifier`, which the catalogue builds (../huggingface/bert.ts); XLM-RoBERTa's
 * and CamemBERT's are copies of it ("Copied from transformers.models.roberta.modeling_roberta.RobertaClassificationHead").
 */
const WHOLE_PARTS: readonly PartEntry[] = [
  { suffix: 'Encoder', families: ['bert', 'roberta', 'xlm-roberta', 'camembert', 'vit'], path: 'encoder' },
  { suffix: 'Embeddings', families: ['bert', 'roberta', 'xlm-roberta', 'camembert', 'vit'], path: 'embeddings' },
  { suffix: 'Pooler', families: ['bert', 'roberta', 'xlm-roberta', 'camembert', 'vit'], path: 'pooler' },
  { suffix: 'LMHead', families: ['roberta', 'xlm-roberta', 'camembert'], path: 'lm_head', head: 'masked-lm' },
  { suffix: 'LMPredictionHead', families: ['bert'], path: 'cls.predictions', head: 'masked-lm' },
  { suffix: 'ClassificationHead', families: ['roberta', 'xlm-roberta', 'camembert'], path: 'classifier', head: 'sequence-classification' },
];

/** Which part a transformers class name is, if WAP builds it: its family, path, whether it is one block, and its model's head. */
export function partOf(className: string): { modelType: string; path: string; block: boolean; head: HfHead } | undefined {
  for (const [table, block] of [[BLOCK_PATHS, true], [WHOLE_PARTS, false]] as const) {
    for (const entry of table) {
      if (!className.endsWith(entry.suffix)) continue;
      const modelType = prefixModelType(className.slice(0, -entry.suffix.length));
      if (modelType && entry.families.includes(modelType)) return { modelType, path: entry.path, block, head: entry.head ?? 'base' };
    }
  }
  return undefined;
}

/**
 * `BertLayer(config)`: the part value, or undefined when the class is no part WAP builds or its config is not one it
 * can read (the caller says which).
 */
export function constructPart(className: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): HfV | { error: string } | undefined {
  const part = partOf(className);
  if (!part) return undefined;
  const given = args[0] ?? kwargs.get('config');
  if (given?.k !== 'hf' || given.what !== 'config') return { error: `${className}(…): its config is not one WAP can read (pass an XConfig(...) or AutoConfig value)` };
  // One block deep: the part is the first block, whatever depth the config gives the whole model; a head needs none.
  const config: HfConfig = { ...given.config, model_type: part.modelType, ...(part.block || part.head !== 'base' ? depthOne(part.modelType) : {}) };
  const root: HfV = { k: 'hf', what: 'model', config, className, head: part.head, source: given.source, range: site.range };
  return { ...root, what: 'module', module: { root, path: part.path, own: true } };
}

function depthOne(modelType: string): HfConfig {
  return modelType === 'gpt2' ? { n_layer: 1 } : { num_hidden_layers: 1 };
}

/**
 * Weights a script ties into a part after building it (HelloDeepSpeed: `self.decoder.weight = embedding_weight`, the
 * encoder's word embeddings): per part model, the layer path → the module that owns the weight now, a submodule of
 * another transformers model or a torch module. Read when the part's layers are recorded (transformersCalls.ts).
 */
const ties = new WeakMap<HfV, Map<string, HfV | Value>>();

export function tiePartWeight(layer: HfV, owner: Value): boolean {
  const at = layer.module;
  if (!at) return false;
  const owned = owner.k === 'hf' && owner.what === 'parameter' ? owner : owner.k === 'param' ? owner : undefined;
  if (!owned) return false;
  let map = ties.get(at.root);
  if (!map) ties.set(at.root, (map = new Map()));
  map.set(at.path, owned);
  return true;
}

export function partWeightTies(root: HfV): ReadonlyMap<string, HfV | Value> | undefined {
  return ties.get(root);
}
