/**
 * The GPUs "your config" runs on when the config is the launch script itself, counted on the machines the plan is
 * made for. Two launches say no number and still say how many:
 * - one process per GPU of each machine: `deepspeed train.py` without --num_gpus (DeepSpeed's default), `torchrun
 *   --nproc_per_node=gpu` (upstream's ddp-tutorial-series): nodes × the cluster's GPUs per machine, and said;
 * - a launch whose script states no setup WAP reads, or is not on disk (`srun torchrun --nnodes 4 --nproc_per_node 1
 *   /shared/examples/multinode_torchrun.py`): its process count alone is the setup compared.
 * The plan places a count on as few machines as hold it; a launch that spreads fewer processes than a machine has
 * over several machines runs over the network where the plan does not, which "your config" says as not modelled.
 * Only the commands that run the compared model count; commands that disagree leave the count to the search.
 */
import { gpusPerMachine } from './compare';
import { baseOf, normalisePath } from './filePaths';
import { launchedCommands, locateLaunchedScript, type LaunchedCommand } from './launchTargets';
import type { StatedSetup } from './setup';
import type { FileAccess } from './types';

/** The machines the plan is made for: their name and GPUs each. */
export interface PlanMachines {
  name: string;
  gpusPerNode: number;
}

/** A plan's machines: its cluster's name and GPUs per machine (the cluster summary every plan report carries). */
export function planMachines(cluster: { name: string; gpus: number; nodes: number }): PlanMachines {
  return { name: cluster.name, gpusPerNode: gpusPerMachine(cluster) };
}

interface CommandWorld {
  world: number;
  /** What says one process per GPU of each machine, when that is how the count was made. */
  perGpu?: string;
  nodes: number;
  perNode: number;
}

function commandWorld(c: LaunchedCommand, machines: PlanMachines): CommandWorld | undefined {
  const p = c.processes;
  if (!p) return undefined;
  if (p.total !== undefined) return { world: p.total, nodes: 1, perNode: p.total };
  if (p.nodes === undefined || p.perNode === undefined) return undefined;
  const perNode = typeof p.perNode === 'number' ? p.perNode : machines.gpusPerNode;
  return { world: perNode * p.nodes, nodes: p.nodes, perNode, ...(typeof p.perNode === 'number' ? {} : { perGpu: p.perNode.gpus }) };
}

/** The commands of the launch script that run `modelFile` (all of them when none does: `--model` names another file). */
function modelCommands(launchFile: string, text: string, modelFile: string | undefined, io: FileAccess): LaunchedCommand[] {
  const all = launchedCommands(launchFile, text);
  const target = modelFile && normalisePath(modelFile);
  const running = all.filter((c) => {
    const located = target ? locateLaunchedScript(launchFile, c, io) : undefined;
    return located !== undefined && normalisePath(located.file) === target;
  });
  return running.length > 0 ? running : all;
}

export interface LaunchedWorld {
  setup: StatedSetup | undefined;
  /** What the count rests on, for the CLI to say: "run_ds.sh: deepspeed without --num_gpus starts one process per GPU…". */
  note?: string;
}

/**
 * The setup to compare, with the GPU count of the launch script `launchFile` where the setup states none: on the
 * plan's machines for a launch that starts one process per GPU, and a setup of that count alone where `setup` is
 * undefined (the launched script states none WAP reads).
 */
export function withLaunchScriptWorld(setup: StatedSetup | undefined, launchFile: string, text: string, modelFile: string | undefined, io: FileAccess, machines: PlanMachines): LaunchedWorld {
  if (setup?.world !== undefined) return { setup };
  const commands = modelCommands(launchFile, text, modelFile, io);
  const worlds = commands.map((c) => commandWorld(c, machines));
  const first = worlds[0];
  if (!first || worlds.some((w) => w?.world !== first.world)) return { setup };
  const name = baseOf(launchFile);
  const spread = first.nodes > 1 && first.perNode < machines.gpusPerNode
    ? [{
      range: commands[0]!.at, short: `${first.nodes} machines × ${first.perNode} GPU${first.perNode === 1 ? '' : 's'} planned on fewer machines`,
      message: `${name} spreads its ${first.world} processes over ${first.nodes} machines; the plan places them on the fewest machines of '${machines.name}' that hold them, where links are faster than the network`,
    }]
    : [];
  const base: StatedSetup = setup ?? { inexpressible: {}, anchor: commands[0]!.at, label: `${commands[0]!.launcher} launch` };
  const out: StatedSetup = { ...base, world: first.world, worldFrom: name, ...(spread.length ? { unmodelled: [...(base.unmodelled ?? []), ...spread] } : {}) };
  const note = first.perGpu
    ? `${name}: ${first.perGpu} starts one process per GPU of each machine: ${first.perNode} on the machines of '${machines.name}'${first.nodes > 1 ? `, ${first.world} on ${first.nodes}` : ''}`
    : undefined;
  return { setup: out, ...(note ? { note } : {}) };
}
