/**
 * Which of the values a run hands to training (Interp.trainedModels: DDP, FSDP, a Trainer, an optimizer…) is the
 * model it trains. Two rules beyond "the first one":
 *
 * - A module inside another trained one is a part of that model, not a model of its own. FSDP2 shards every block
 *   before the model that holds them (pytorch/examples' FSDP2 example: `for layer in model.layers:
 *   fully_shard(layer)`, then `fully_shard(model)`), so the first value handed over is a block; the model is the root
 *   that contains it.
 * - A single torch layer the script hands to DDP, FSDP or a Trainer is a model (the DDP tutorial trains
 *   `torch.nn.Linear(20, 1)`): a layer on its own is not offered as a model, but one handed over whole is what the
 *   run trains.
 */
import { isKerasModelInstance } from './kerasRuntime';
import type { Root } from './candidateSpecs';
import { descendants } from './torchModuleValues';
import { isTorchModule } from './torchRuntime';
import { handedToWrapper } from './trainingWrappers';
import type { ModV, Value } from './values';

/** A value that is a model on its own: a torch module class instance, a container or composite, a Keras or Hugging Face model. */
export const isModelValue = (v: Value | undefined): v is Root =>
  !!v &&
  (isTorchModule(v) || (v.k === 'mod' && (v.container === 'sequential' || v.composite !== undefined)) || v.k === 'kmodel' || isKerasModelInstance(v) || (v.k === 'hf' && v.what === 'model'));

/**
 * A single torch layer: not a container (nn.Sequential is a model on its own; nn.ModuleList has no forward), a
 * composite, a loss (a criterion handed to `accelerator.prepare` trains nothing) or an nn.Parameter.
 */
export function isBareLayer(v: Value | undefined): v is ModV {
  return v?.k === 'mod' && !v.container && v.composite === undefined && !v.loss && v.type !== 'Parameter';
}

/**
 * The model among values handed to training: the first that no other of them contains. A bare layer counts where a
 * wrapper was handed it whole; one only an optimizer steps is a part of a model (linear probing's
 * `SGD(model.fc.parameters())`), not a model of one layer.
 */
export function trainedModel(values: readonly Value[]): Root | undefined {
  const models = [...new Set(values.filter((v): v is Root => isModelValue(v) || (isBareLayer(v) && handedToWrapper(v))))];
  return models.find((m) => !models.some((other) => other !== m && descendants(other).includes(m)));
}
