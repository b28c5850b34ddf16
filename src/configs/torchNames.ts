/**
 * Which torch API a call in a training script calls, through the script's own imports: `FSDP(…)` after
 * `from torch.distributed.fsdp import FullyShardedDataParallel as FSDP` is torch's FullyShardedDataParallel, and
 * after `from torch.distributed.fsdp import fully_shard as FSDP` it is FSDP2's fully_shard; fairscale's FSDP, a
 * name from anywhere but torch, is nothing. And how the script can spell a torch name an edit adds (its own import
 * name, else the module path through `import torch`).
 */
import type { Node } from 'web-tree-sitter';
import { mentionsTrainingArguments } from './trainingArguments';

/** The calls that make a plain PyTorch script a training setup of its own: it wraps the model itself. */
const WRAPS_ITSELF = /\b(FullyShardedDataParallel|fully_shard|DistributedDataParallel|ZeroRedundancyOptimizer)\b/;
/**
 * Frameworks that wrap the model from their own configuration (Lightning's and transformers' Trainer, accelerate,
 * Fabric, DeepSpeed's engine): a script built on one is that framework's config, whatever torch names it mentions.
 */
const WRAPPED_BY_FRAMEWORK = /\bAccelerator\s*\(|\bFabric\s*\(|\bdeepspeed\.initialize\s*\(/;

/** Cheap, without parsing: a script whose model a framework it builds in code wraps (accelerate, Fabric, DeepSpeed). */
export function wrappedByFramework(text: string): boolean {
  return WRAPPED_BY_FRAMEWORK.test(text);
}

/** Cheap, without parsing: a Python script that wraps its model in DDP/FSDP itself and is no framework's config. */
export function wrapsModelItself(text: string): boolean {
  if (!WRAPS_ITSELF.test(text) || !/^[ \t]*(import|from)[ \t]+torch\b/m.test(text)) return false;
  if (wrappedByFramework(text) || mentionsTrainingArguments(text)) return false;
  return !(/\bTrainer\s*\(/.test(text) && /\b(lightning|pytorch_lightning|transformers|trl)\b/.test(text));
}

export interface TorchNames {
  /** torch's own name for what a call calls (its last part: 'FullyShardedDataParallel'), or undefined when it is not torch's. */
  of(call: Node): string | undefined;
  /** The torch module a name was imported from, as written: 'torch.distributed._composable.fsdp'. */
  moduleOf(name: string): string | undefined;
  /** How this script writes torch's `name` from `module`: its own import name, else the path through `import torch`. */
  spell(name: string, module: string): string | undefined;
  /** The name `torch` itself is imported as, for dtypes (`torch.bfloat16`); undefined without `import torch`. */
  torch?: string;
}

const isTorchModule = (m: string): boolean => m === 'torch' || m.startsWith('torch.');

/** Reads the script's imports of torch (at any depth: torchtitan imports inside functions too). */
export function torchNames(root: Node): TorchNames {
  /** Local name → torch's name and module, for `from torch… import X as Y`. */
  const names = new Map<string, { name: string; module: string }>();
  /** Local name → the torch module it stands for (`import torch.distributed as dist`, `from torch import nn`). */
  const moduleAliases = new Map<string, string>();
  for (const stmt of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    if (!stmt) continue;
    if (stmt.type === 'import_from_statement') {
      const module = stmt.childForFieldName('module_name')?.text.replace(/\s+/g, '') ?? '';
      if (!isTorchModule(module)) continue;
      for (const item of stmt.childrenForFieldName('name')) {
        if (!item) continue;
        const name = item.type === 'aliased_import' ? item.childForFieldName('name')?.text : item.text;
        const local = item.type === 'aliased_import' ? item.childForFieldName('alias')?.text : item.text;
        if (!name || !local) continue;
        names.set(local, { name, module });
        moduleAliases.set(local, `${module}.${name}`);
      }
      continue;
    }
    for (const item of stmt.childrenForFieldName('name')) {
      if (!item) continue;
      const dotted = (item.type === 'aliased_import' ? item.childForFieldName('name')?.text : item.text)?.replace(/\s+/g, '') ?? '';
      if (!isTorchModule(dotted)) continue;
      // `import torch.distributed.fsdp` binds `torch`; `import torch.distributed as dist` binds `dist`.
      if (item.type === 'aliased_import') moduleAliases.set(item.childForFieldName('alias')?.text ?? '', dotted);
      else moduleAliases.set('torch', 'torch');
    }
  }
  const torch = [...moduleAliases].find(([, m]) => m === 'torch')?.[0];
  return {
    of(call) {
      const fn = call.childForFieldName('function');
      if (fn?.type === 'identifier') return names.get(fn.text)?.name;
      if (fn?.type !== 'attribute') return undefined;
      const root = fn.text.replace(/\s+/g, '').split('.')[0]!;
      return moduleAliases.has(root) ? fn.childForFieldName('attribute')?.text : undefined;
    },
    moduleOf: (name) => [...names.values()].find((n) => n.name === name)?.module,
    spell(name, module) {
      const local = [...names].find(([, n]) => n.name === name)?.[0];
      return local ?? (torch !== undefined ? `${torch}${module.slice('torch'.length)}.${name}` : undefined);
    },
    torch,
  };
}
