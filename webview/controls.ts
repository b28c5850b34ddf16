/**
 * The controls bar: GPU count, objective, strategies and batch size, plus
 * "Export Chrome trace" and "Apply to training config". A committed change
 * reports the full control set; the host re-plans and sends a new plan.
 * Widgets come from ./toolkit, the one module that knows the widget library.
 */
import type { Objective, StrategyMode } from '../src/protocol/plan';
import type { PlanControls } from '../src/protocol/webview';
import { el } from './dom';
import { createButton, createDropdown, createNumberField, getValue, onChange, setChoices, setDisabled, setValue, type Choice } from './toolkit';

export interface ControlsCallbacks {
  replan(controls: PlanControls): void;
  exportTrace(): void;
  applyToConfig(): void;
  /** A control holds a value no plan can take (e.g. batch 0): say so, post nothing. */
  invalid(message: string): void;
}

const OBJECTIVES: Choice[] = [
  { value: 'throughput', label: 'Throughput' },
  { value: 'efficiency', label: 'Efficiency' },
];
const STRATEGIES: Choice[] = [
  { value: 'dp', label: 'Data parallel only' },
  { value: 'hybrid', label: 'Data + model' },
  { value: 'all', label: 'All (incl. pipeline)' },
];

function gpuChoices(maxGpus: number): Choice[] {
  const c: Choice[] = [{ value: 'auto', label: 'Auto' }];
  for (let i = 1; i <= Math.max(1, maxGpus); i++) c.push({ value: String(i), label: String(i) });
  return c;
}

function labelled(text: string, forId: string, control: HTMLElement): HTMLElement {
  return el('div', { class: 'control' }, el('label', { for: forId, class: 'control-label' }, text), control);
}

export class ControlsBar {
  readonly root: HTMLElement;
  private readonly gpus: HTMLElement;
  private readonly objective: HTMLElement;
  private readonly strategies: HTMLElement;
  private readonly batch: HTMLElement;
  private readonly exportBtn: HTMLElement;
  private readonly applyBtn: HTMLElement;
  private maxGpus = 0;
  private current: PlanControls = { objective: 'throughput', strategies: 'all', batch: 32 };

  constructor(private readonly callbacks: ControlsCallbacks) {
    this.gpus = createDropdown('ctl-gpus', 'GPU count', gpuChoices(1), 'auto');
    this.objective = createDropdown('ctl-objective', 'Objective', OBJECTIVES, 'throughput');
    this.strategies = createDropdown('ctl-strategies', 'Strategies', STRATEGIES, 'all');
    this.batch = createNumberField('ctl-batch', 'Batch size', 32, 1);
    this.exportBtn = createButton('Export Chrome trace', 'secondary');
    this.applyBtn = createButton('Apply to training config', 'primary');
    this.exportBtn.id = 'btn-export-trace';
    this.applyBtn.id = 'btn-apply-config';
    this.root = el(
      'div',
      { class: 'controls', role: 'group', 'aria-label': 'Plan controls' },
      labelled('GPUs', 'ctl-gpus', this.gpus),
      labelled('Objective', 'ctl-objective', this.objective),
      labelled('Strategies', 'ctl-strategies', this.strategies),
      el('div', { class: 'control' }, this.batch),
      el('div', { class: 'control-buttons' }, this.exportBtn, this.applyBtn),
    );
    for (const c of [this.gpus, this.objective, this.strategies, this.batch]) onChange(c, () => this.commit());
    this.exportBtn.addEventListener('click', () => callbacks.exportTrace());
    this.applyBtn.addEventListener('click', () => callbacks.applyToConfig());
  }

  /** Shows the settings a plan was made with, without firing a re-plan. */
  show(controls: PlanControls, maxGpus: number, hasPlan: boolean): void {
    this.current = { ...controls };
    if (maxGpus !== this.maxGpus) {
      this.maxGpus = maxGpus;
      setChoices(this.gpus, gpuChoices(maxGpus), controls.gpus ? String(controls.gpus) : 'auto');
    }
    setValue(this.gpus, controls.gpus ? String(controls.gpus) : 'auto');
    setValue(this.objective, controls.objective);
    setValue(this.strategies, controls.strategies);
    setValue(this.batch, String(controls.batch));
    setDisabled(this.exportBtn, !hasPlan);
    setDisabled(this.applyBtn, !hasPlan);
  }

  read(): PlanControls | { error: string } {
    const batch = Number(getValue(this.batch));
    if (!Number.isInteger(batch) || batch < 1) return { error: 'Batch size must be a whole number ≥ 1.' };
    const g = getValue(this.gpus);
    const controls: PlanControls = {
      objective: (getValue(this.objective) || 'throughput') as Objective,
      strategies: (getValue(this.strategies) || 'all') as StrategyMode,
      batch,
    };
    if (g && g !== 'auto') controls.gpus = Number(g);
    return controls;
  }

  private commit(): void {
    const c = this.read();
    if ('error' in c) {
      this.callbacks.invalid(c.error);
      return;
    }
    const same = c.gpus === this.current.gpus && c.objective === this.current.objective && c.strategies === this.current.strategies && c.batch === this.current.batch;
    if (same) return;
    this.current = c;
    this.callbacks.replan(c);
  }
}
