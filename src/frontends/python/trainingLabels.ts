/**
 * A forward's label arguments. Training code passes the labels its model's
 * forward takes (nanoGPT's `model(X, Y)` for `forward(idx, targets=None)`,
 * transformers' Trainer `labels=`), and the forward computes the loss only
 * when they are given. Read with their default None, the model would be
 * planned as inference: no loss, and nanoGPT's LM head on one position
 * (`if targets is None: logits = self.lm_head(x[:, [-1], :])`). So a
 * parameter named as labels are (`targets`, `labels`, `masked_lm_labels`,
 * `next_sentence_label`…) whose default is None is read as given, and a
 * diagnostic says so.
 *
 * The value is a tensor outside the graph, of unknown shape: the data loader
 * feeds it, no layer computes it, and the losses only take its prediction
 * (losses.ts).
 */
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import type { FuncV, TensorV, Value } from './values';

/** Parameter names training code fills with labels: torch and transformers' conventions. */
const LABEL_NAME = /^(targets?|labels?|[a-z0-9_]+_(labels?|targets?))$/;

export interface LabelArguments {
  /** Keyword arguments for forward, one per label parameter. */
  kwargs: Map<string, Value>;
  names: string[];
  /** Where the diagnostic points: the first label's default. */
  node?: PyNode;
}

/** Labels as a data loader gives them. */
export const givenLabels = (): TensorV => ({ k: 'tensor', id: '', framework: 'pytorch', labels: true });

/** The label parameters of `forward` (default None), each bound to a tensor the training loop would give. */
export function labelArguments(interp: Interp, forward: FuncV): LabelArguments {
  const kwargs = new Map<string, Value>();
  const names: string[] = [];
  let node: PyNode | undefined;
  for (const p of interp.params(forward.node).slice(1)) {
    if (p.kind === 'star' || p.kind === 'dstar' || !p.defaultNode || interp.text(p.defaultNode) !== 'None' || !LABEL_NAME.test(p.name)) continue;
    kwargs.set(p.name, givenLabels());
    names.push(p.name);
    node ??= p.defaultNode;
  }
  return { kwargs, names, node };
}

export function labelNote(names: readonly string[], cls: string): string {
  const list = names.map((n) => `\`${n}\``).join(', ');
  return `${cls}.forward is read with ${list} given, as a training step passes ${names.length > 1 ? 'them' : 'it'}: the loss it computes is planned. Its default None would plan inference.`;
}
