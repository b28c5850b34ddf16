/**
 * A banner above the plan when the model it was made for is known to be
 * incomplete ("incomplete: 3 layers opaque"): the numbers below cover only
 * the layers WAP could read, and that must be visible, not only listed among
 * the diagnostics.
 */
import type { PlanOutcome } from '../src/protocol/plan';
import { clear, el } from './dom';

export class IncompleteBanner {
  readonly root = el('div', { class: 'incomplete-banner', role: 'alert', id: 'wap-incomplete' });

  constructor() {
    this.root.hidden = true;
  }

  update(outcome: PlanOutcome): void {
    const info = outcome.incomplete;
    clear(this.root);
    this.root.hidden = !info;
    if (!info) return;
    this.root.append(el('strong', {}, info.summary), ' — the plan covers only the layers WAP could read.');
    if (info.reasons.length > 0) {
      const list = el('ul', { class: 'incomplete-reasons' });
      for (const r of info.reasons.slice(0, 5)) list.append(el('li', {}, r));
      this.root.append(list);
    }
  }
}
