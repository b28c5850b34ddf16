/**
 * Which names a freeze step reads, where two transformers releases name a model's parameters differently: the
 * graph's (transformers 4.46–4.51's, the checkpoints' keys) and a newer release's (4.52's vision-language models under
 * `model`, transformers 5's fused experts `mlp.experts.gate_up_proj`; ../huggingface/newerNames.ts).
 *
 * A step reached through a path only one release has (`model.model.vision_tower`, `…experts.gate_up_proj`;
 * `language_model.model.layers`, `…block_sparse_moe`) reads that release's names. A step both releases reach alike
 * (`model.named_parameters()`) is decided under both: when they agree, or when only one of them tells parameters apart
 * (`"experts.gate_up_proj" in n` matches nothing under the older names: the script names the newer ones), that one
 * is read. When both tell parameters apart and disagree (`"gate" in n`, Mixtral's routers under the older names,
 * routers and experts under transformers 5's), the release decides and WAP cannot know it: the graph's names are read,
 * as before, and said.
 */
import type { SourceRange } from '../../core/ir';
import type { FreezeStep, RequiresGradVerdict } from './freezeSteps';

/** A second name for each of a model's parameters: a newer release's, by the graph's. */
export interface ParameterRenaming {
  /** A parameter's full name in the newer release, by its full name in the graph. */
  nameOf(graphName: string): string;
  /** The release that renamed them, for messages ('4.52', '5'). */
  since: string;
  /** No release names them as the graph does (GPT-OSS's experts): a step is read in the newer names wherever it can be. */
  graphNamesUnreleased?: boolean;
}

/** A step read one way: which parameters it covers, and its verdict on each, by full graph name (aliases included). */
export interface StepReading {
  covers(name: string): boolean;
  verdict(name: string): RequiresGradVerdict;
}

/** A step whose verdicts depend on the release, read with the graph's names: one parameter the readings differ on. */
export interface ReleaseDependentStep {
  range: SourceRange;
  since: string;
  name: string;
  newerName: string;
  graphVerdict: RequiresGradVerdict;
  newerVerdict: RequiresGradVerdict;
}

const under = (prefix: string, name: string): boolean => !prefix || name === prefix || name.startsWith(prefix + '.');
const relative = (prefix: string, name: string): string => (name === prefix ? '' : prefix ? name.slice(prefix.length + 1) : name);

/**
 * The reading applyFreezeSteps applies for a step over `names` (every parameter's full graph name), each name's other
 * names given by `namesOf` (a tied weight's owner first, then the modules that reuse it). `dependent` is set when the
 * readings disagree and the graph's was taken.
 */
export function stepReading(
  step: FreezeStep,
  names: readonly string[],
  namesOf: (name: string) => string[],
  renaming: ParameterRenaming | undefined,
  dependent: (d: ReleaseDependentStep) => void,
): StepReading {
  // One verdict per name relative to the step: a fused tensor's name comes back once per expert it holds.
  const memo = new Map<string, RequiresGradVerdict>();
  const decide = (rel: string): RequiresGradVerdict => {
    if (!memo.has(rel)) memo.set(rel, step.requiresGrad(rel));
    return memo.get(rel);
  };
  const reading = (prefix: string, rename: (n: string) => string): StepReading => {
    const seen = (name: string): string | undefined => namesOf(name).map(rename).find((n) => under(prefix, n));
    return {
      covers: (name) => seen(name) !== undefined,
      verdict: (name) => {
        const n = seen(name);
        return n === undefined ? undefined : decide(relative(prefix, n));
      },
    };
  };
  const graph = reading(step.prefix, (n) => n);
  const newerPrefix = step.newerPrefix;
  if (!renaming || newerPrefix === undefined || step.naming === 'graph') return graph;
  const newer = reading(newerPrefix, renaming.nameOf);
  if (step.naming === 'newer' || renaming.graphNamesUnreleased) return newer;
  const covered = names.filter((n) => graph.covers(n) || newer.covers(n));
  const graphVerdicts = covered.map((n) => graph.verdict(n));
  const newerVerdicts = covered.map((n) => newer.verdict(n));
  const differs = covered.findIndex((_, i) => graphVerdicts[i] !== newerVerdicts[i]);
  if (differs < 0) return graph;
  const tellsApart = (verdicts: RequiresGradVerdict[]): boolean => verdicts.some((v) => v !== verdicts[0]);
  const [byGraph, byNewer] = [tellsApart(graphVerdicts), tellsApart(newerVerdicts)];
  if (byNewer && !byGraph) return newer;
  if (byGraph && !byNewer) return graph;
  const name = covered[differs];
  dependent({ range: step.range, since: renaming.since, name, newerName: renaming.nameOf(name), graphVerdict: graphVerdicts[differs], newerVerdict: newerVerdicts[differs] });
  return graph;
}

const stateOf = (v: RequiresGradVerdict): string => (v === true ? 'trained' : v === false ? 'frozen' : v === 'unreadable' ? 'undecided' : 'left as it was');

/** The warning for a step whose verdicts depend on the release: what each reading does to one parameter, and which was planned. */
export function releaseDependentMessage(d: ReleaseDependentStep): string {
  return `This code decides parameters by name, and transformers ${d.since} renamed them: read with the names of earlier releases, \`${d.name}\` is ${stateOf(d.graphVerdict)}; read with ${d.since}'s (\`${d.newerName}\`), it is ${stateOf(d.newerVerdict)}. WAP cannot tell which release runs the script and plans the earlier reading; a condition on names both releases share decides the same either way`;
}
