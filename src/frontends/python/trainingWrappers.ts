/**
 * Library calls that wrap a model for training and hand back something that
 * runs the same forward: torch.compile, DistributedDataParallel,
 * DataParallel, FSDP (FullyShardedDataParallel, FSDP2's fully_shard),
 * Accelerate's `accelerator.prepare(…)`, Lightning Fabric's `fabric.setup(…)`,
 * `deepspeed.initialize(model=…)` and PEFT's `get_peft_model`. They change how the model is trained,
 * which the planner decides, not what it computes. Activation checkpointing
 * (`torch.utils.checkpoint.checkpoint(block, x)`, `checkpoint_sequential`)
 * runs the function it is given and runs it again in the backward: its
 * layers are read through it, and the recompute it implies is the plan's
 * recompute dimension, which the search chooses. nanoGPT's train.py
 * compiles and wraps its GPT: without this, `model` became unknown and the
 * file's GPT class was read with its defaults instead (124 M parameters for
 * the 355 M GPT the script builds), a silent wrong model.
 */
import { noteFitLoader, noteTrainerAccumulation } from './runLoaderBatch';
import type { Interp } from './interpreter';
import { PEFT_CALLS, peftWraps } from './peftCalls';
import { noteTrainingArgumentsBatch } from './runBatch';
import { noteAcceleratorPrecision, noteAutocastPrecision, noteLightningPrecision, noteMatmulPrecision, noteTrainingArgumentsPrecision } from './runPrecision';
import { noteDeepSpeedConfig } from './runDeepSpeedConfig';
import { noteCompiledModel } from './compiledModel';
import { UNKNOWN, iterItems, type CallSite, type Value } from './values';

/** Calls whose first argument (or `module=`/`model=`) is the model they return. */
const RETURNS_MODEL = [
  /^torch\.compile$/,
  /^torch\.nn\.(parallel\.)?((distributed|data_parallel)\.)?(DistributedDataParallel|DataParallel)$/,
  /^torch\.distributed\.fsdp\.(fully_sharded_data_parallel\.)?FullyShardedDataParallel$/,
  /^torch\.distributed\.(_composable\.)?(fsdp\.)?fully_shard$/,
  // PEFT wraps the base model, frozen, with small adapters (peftCalls.ts).
  PEFT_CALLS,
];

/** Lightning's Trainer, as lightning-hydra-template instantiates it too (`_target_: lightning.pytorch.trainer.Trainer`). */
const LIGHTNING_TRAINER = /^(lightning\.pytorch|pytorch_lightning|lightning)\.(trainer\.(trainer\.)?)?Trainer$/;

/** Library objects whose methods hand back what they were given: `Accelerator()`, `Fabric()`. */
const PREPARERS = /^(accelerate\.(accelerator\.)?Accelerator|lightning\.(fabric\.)?Fabric|lightning\.fabric\.fabric\.Fabric|lightning_fabric\.(fabric\.)?Fabric)$/;

/** The marker a preparer's instance carries as its library path, so its methods are recognised when called. */
const INSTANCE = '()';

const modelArg = (args: Value[], kwargs: Map<string, Value>): Value => args[0] ?? kwargs.get('module') ?? kwargs.get('model') ?? UNKNOWN;

/**
 * Trainers that train the model they are given and hand back an object of their own: transformers' Trainer (and
 * Seq2SeqTrainer), trl's trainers. Lightning's Trainer is given its model by a method, `trainer.fit(model)`
 * (LIGHTNING_TRAINER).
 */
const TRAINERS = /^(transformers\.(trainer\.|trainer_seq2seq\.)?(Trainer|Seq2SeqTrainer)|trl\.(trainer\.)?\w*Trainer)$/;

/**
 * torch.multiprocessing's spawn runs `fn(rank, *args)` in each process it starts (the ImageNet example's
 * `mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))`): rank 0's is the one read.
 */
const SPAWN = /^torch\.multiprocessing\.(spawn\.)?spawn$/;

function spawnWorker(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const fn = args[0] ?? kwargs.get('fn');
  const given = args[1] ?? kwargs.get('args');
  const rest = given?.k === 'tuple' || given?.k === 'list' ? given.items : [];
  if (fn) interp.callValue(fn, [{ k: 'num', v: 0, float: false }, ...rest], new Map(), site);
  return { k: 'none' };
}

/**
 * Values a wrapper was handed whole: DDP, FSDP, a Trainer, accelerate take the model itself, where an optimizer may step
 * only a part of it (`SGD(model.fc.parameters())` trains a head, not a model of one Linear; optimizerModels.ts).
 */
const handedWhole = new WeakSet<Value>();

export const handedToWrapper = (v: Value): boolean => handedWhole.has(v);

function trains(interp: Interp, ...values: Value[]): void {
  for (const v of values) handedWhole.add(v);
  interp.trainedModels.push(...values);
}

/** What a wrapping call returns, or undefined when `path` is not one. */
export function trainingWrapper(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  if (SPAWN.test(path)) return spawnWorker(interp, args, kwargs, site);
  noteTrainingArgumentsPrecision(interp, path, kwargs, site);
  noteAutocastPrecision(interp, path, args, kwargs, site);
  noteAcceleratorPrecision(interp, path, kwargs, site);
  noteDeepSpeedConfig(interp, path, kwargs, site);
  noteMatmulPrecision(interp, path, args, kwargs, site);
  noteTrainingArgumentsBatch(interp, path, kwargs, site);
  noteCompiledModel(interp, path, site);
  if (RETURNS_MODEL.some((r) => r.test(path))) {
    const model = modelArg(args, kwargs);
    peftWraps(interp, path, model, args, kwargs, site);
    trains(interp, model);
    return model;
  }
  if (TRAINERS.test(path)) {
    trains(interp, modelArg(args, kwargs));
    return undefined;
  }
  if (LIGHTNING_TRAINER.test(path)) {
    noteLightningPrecision(interp, kwargs, site);
    noteTrainerAccumulation(interp, kwargs);
  }
  if (PREPARERS.test(path) || LIGHTNING_TRAINER.test(path)) return { k: 'lib', path: path + INSTANCE };
  const method = path.endsWith(')') ? undefined : /^(.*\(\))\.(\w+)$/.exec(path);
  if (method && LIGHTNING_TRAINER.test(method[1].slice(0, -INSTANCE.length))) {
    // `trainer.fit(model, datamodule=…)` trains the LightningModule it is given; validate/test/predict do not.
    if (method[2] === 'fit') {
      trains(interp, modelArg(args, kwargs));
      noteFitLoader(interp, args, kwargs, site);
    }
    return method[2] === 'fit' ? { k: 'none' } : undefined;
  }
  if (method && PREPARERS.test(method[1].slice(0, -INSTANCE.length))) {
    // accelerator.prepare(model, optimizer, loader) and fabric.setup(model, optimizer) return their arguments in order.
    if (method[2] === 'prepare' || method[2] === 'setup') {
      trains(interp, ...args);
      return args.length === 1 ? args[0] : { k: 'tuple', items: args };
    }
    if (method[2] === 'prepare_model' || method[2] === 'setup_module') {
      trains(interp, modelArg(args, kwargs));
      return modelArg(args, kwargs);
    }
    return undefined;
  }
  // deepspeed.initialize returns (engine, optimizer, training_dataloader, lr_scheduler); the engine runs the model.
  if (path === 'deepspeed.initialize') {
    trains(interp, kwargs.get('model') ?? args[1] ?? UNKNOWN);
    return { k: 'tuple', items: [kwargs.get('model') ?? args[1] ?? UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN] };
  }
  return undefined;
}

/** torch.utils.checkpoint's own keywords, not the function's. */
const CHECKPOINT_KEYWORDS = new Set(['use_reentrant', 'preserve_rng_state', 'context_fn', 'determinism_check', 'debug']);

/**
 * `checkpoint(fn, *args, **kwargs)` is `fn(*args, **kwargs)` forward; `checkpoint_sequential(functions, segments, input)`
 * chains the modules. Undefined when `path` is neither.
 */
export function checkpointCall(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  if (!/^torch\.utils\.checkpoint\.(checkpoint|checkpoint_sequential)$/.test(path)) return undefined;
  const own = new Map([...kwargs].filter(([k]) => !CHECKPOINT_KEYWORDS.has(k)));
  if (path.endsWith('.checkpoint')) {
    const [fn, ...rest] = args;
    return fn ? interp.callValue(fn, rest, own, site) : UNKNOWN;
  }
  const functions = args[0] ?? kwargs.get('functions');
  const modules = functions && (functions.k === 'mod' && functions.children ? [...functions.children.values()] : iterItems(functions));
  let x = args[2] ?? kwargs.get('input') ?? UNKNOWN;
  if (!modules) return UNKNOWN;
  for (const m of modules) x = interp.callValue(m, [x], new Map(), site);
  return x;
}
