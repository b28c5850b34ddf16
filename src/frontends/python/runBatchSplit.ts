/**
 * A batch number a script divides among its processes, so that the number it was given is not one process's: nanoGPT
 * divides `gradient_accumulation_steps //= ddp_world_size` (the whole run's steps), while the ImageNet example divides
 * `args.batch_size = int(args.batch_size / ngpus_per_node)`, with `ngpus_per_node = torch.cuda.device_count()`: its
 * -b is "the total batch size of all GPUs on the current node" (its help says so), and a run over N nodes trains N
 * times it. Which one a divisor is, is read from its own name or from what the file assigns it (torchrun's
 * LOCAL_WORLD_SIZE and --nproc_per_node, `torch.cuda.device_count()`, Horovod's `hvd.local_size()` count one node's
 * processes; the world size counts all of them). The node count a per-node number is multiplied by is the one the
 * script itself computes its world size with (`args.world_size = ngpus_per_node * args.world_size`: the other factor
 * is the nodes, --world-size 2), read where that assignment runs.
 */
import { PROCESS_COUNT } from '../../core/batchOptions';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import { short } from './branches';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { binaryOperator } from './productFactors';
import { fileLabel } from './runFacts';
import { positiveWhole, type Scope } from './values';

/** A count of one node's processes, by the names launchers and libraries give it (see the header). */
const PER_NODE_COUNT = /local_world_size|local_size|per_node|device_count/i;

/** How a script splits a batch name: the statement, the divisor and whether it counts one node's processes. */
export interface BatchSplit {
  node: PyNode;
  divisor: PyNode;
  /** Why the divisor counts one node's processes; undefined where it counts all of them. */
  perNode: string | undefined;
}

/** The name an assignment writes: `x` or the attribute of `args.x`. */
export function targetName(interp: Interp, left: PyNode | undefined): string | undefined {
  if (left?.type === 'identifier') return interp.text(left);
  if (left?.type === 'attribute') return interp.text(field(left, 'attribute') ?? left);
  return undefined;
}

/** Every assignment in the analysed file to `name` (a variable, or an attribute such as `args.name`), in any function. */
function assignmentsOf(interp: Interp, name: string): PyNode[] {
  const out: PyNode[] = [];
  const visit = (node: PyNode): void => {
    if (node.type === 'assignment' && targetName(interp, field(node, 'left')) === name && field(node, 'right')) out.push(node);
    for (const child of namedChildren(node)) visit(child);
  };
  if (interp.mainRoot) visit(interp.mainRoot);
  return out;
}

/**
 * Why a process count counts one node's processes, or undefined where it does not: what the file assigns its name,
 * where that is a per-node count itself and not a product of one (the ImageNet example's `world_size = ngpus_per_node
 * * world_size` is all of them), else its own name (`LOCAL_WORLD_SIZE`, `args.nproc_per_node`).
 */
export function oneNodeCount(interp: Interp, count: PyNode): string | undefined {
  const name = count.type === 'identifier' || count.type === 'attribute' ? targetName(interp, count) : undefined;
  const definition = name ? assignmentsOf(interp, name).find((a) => /^[^*]*$/.test(interp.text(field(a, 'right')!)) && PER_NODE_COUNT.test(interp.text(field(a, 'right')!))) : undefined;
  if (definition) return `\`${short(interp.text(definition))}\` at line ${rangeOf(definition).line}`;
  return PER_NODE_COUNT.test(interp.text(count)) ? `${interp.text(count)}, one node's by its name` : undefined;
}

/** The process count a batch name is divided by in `right`: the divisor of a `/` or `//` in it (through `int(…)`). */
function divisorIn(interp: Interp, right: PyNode, name: string): PyNode | undefined {
  const op = binaryOperator(interp, right);
  if (op === '/' || op === '//') {
    const dividend = field(right, 'left');
    const divisor = field(right, 'right');
    if (dividend && divisor && PROCESS_COUNT.test(interp.text(divisor)) && new RegExp(`\\b${name}\\b`).test(interp.text(dividend))) return divisor;
  }
  for (const child of namedChildren(right)) {
    const found = divisorIn(interp, child, name);
    if (found) return found;
  }
  return undefined;
}

/** How `node` (an assignment) splits a batch name over the processes, `n //= world_size`, `n = int(n / ngpus)`; else undefined. */
export function splitOf(interp: Interp, node: PyNode, name: string): BatchSplit | undefined {
  const right = field(node, 'right');
  if (!right) return undefined;
  let divisor: PyNode | undefined;
  if (node.type === 'augmented_assignment') {
    const op = interp.text(node.children.find((c) => c.field === 'operator') ?? node);
    divisor = /^(\/\/=|\/=)$/.test(op) && PROCESS_COUNT.test(interp.text(right)) ? right : undefined;
  } else divisor = divisorIn(interp, right, name);
  return divisor && { node, divisor, perNode: oneNodeCount(interp, divisor) };
}

/**
 * Before an assignment of the analysed file runs: where it computes the world size as one node's processes times
 * another factor, that factor is the run's node count (the ImageNet example's `args.world_size = ngpus_per_node *
 * args.world_size`, its --world-size the nodes before the line rewrites it). The first one read counts.
 */
export function noteNodeCount(interp: Interp, node: PyNode, scope: Scope): void {
  const left = field(node, 'left');
  const right = field(node, 'right');
  const name = targetName(interp, left);
  if (interp.run.nodes || !left || !right || !name || node.lines !== interp.mainRoot?.lines) return;
  if (!PROCESS_COUNT.test(name) || PER_NODE_COUNT.test(name) || binaryOperator(interp, right) !== '*') return;
  const factors = [field(right, 'left'), field(right, 'right')];
  const perNode = factors.findIndex((f) => f && PROCESS_COUNT.test(interp.text(f)) && oneNodeCount(interp, f));
  const other = perNode < 0 ? undefined : factors[1 - perNode];
  if (!other || oneNodeCount(interp, other)) return;
  const nodes = positiveWhole(evalExpr(interp, other, scope));
  if (nodes !== undefined) interp.run.nodes = { value: nodes, said: `${interp.text(other)} ${nodes} nodes (\`${short(interp.text(node))}\` at ${fileLabel(interp.file)}:${rangeOf(node).line})` };
}

/** The words a per-node split is said with: the statement and where its divisor counts one node. */
export function perNodeWords(interp: Interp, split: BatchSplit): string {
  return `\`${short(interp.text(split.node))}\` at line ${rangeOf(split.node).line} divides it among the GPUs of one node (${split.perNode})`;
}
