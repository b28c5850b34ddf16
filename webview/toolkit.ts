/**
 * The only module that touches @vscode/webview-ui-toolkit (archived upstream in
 * January 2025). Everything else asks this file for plain HTMLElements and
 * reads them through getValue/isChecked, so swapping to
 * @vscode-elements/elements means rewriting this file alone.
 */
import {
  provideVSCodeDesignSystem,
  vsCodeButton,
  vsCodeCheckbox,
  vsCodeDropdown,
  vsCodeOption,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';

let registered = false;

export function registerToolkit(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(vsCodeButton(), vsCodeCheckbox(), vsCodeDropdown(), vsCodeOption(), vsCodeTextField());
}

export type ButtonAppearance = 'primary' | 'secondary' | 'icon';

export function createButton(label: string, appearance: ButtonAppearance = 'primary'): HTMLElement {
  const b = document.createElement('vscode-button');
  b.setAttribute('appearance', appearance);
  b.textContent = label;
  return b;
}

export interface Choice {
  value: string;
  label: string;
}

export function createDropdown(id: string, ariaLabel: string, choices: Choice[], value: string): HTMLElement {
  const d = document.createElement('vscode-dropdown');
  d.id = id;
  d.setAttribute('aria-label', ariaLabel);
  setChoices(d, choices, value);
  return d;
}

/** Replaces a dropdown's options (e.g. the GPU count range after a new cluster). */
export function setChoices(dropdown: HTMLElement, choices: Choice[], value: string): void {
  while (dropdown.firstChild) dropdown.removeChild(dropdown.firstChild);
  for (const c of choices) {
    const o = document.createElement('vscode-option');
    o.setAttribute('value', c.value);
    if (c.value === value) o.setAttribute('selected', '');
    o.textContent = c.label;
    dropdown.append(o);
  }
  setValue(dropdown, value);
}

export function createNumberField(id: string, label: string, value: number, min: number): HTMLElement {
  const f = document.createElement('vscode-text-field');
  f.id = id;
  f.setAttribute('type', 'number');
  f.setAttribute('min', String(min));
  f.setAttribute('value', String(value));
  f.setAttribute('size', '6');
  f.textContent = label;
  return f;
}

export function createCheckbox(id: string, label: string, checked: boolean): HTMLElement {
  const c = document.createElement('vscode-checkbox');
  c.id = id;
  if (checked) c.setAttribute('checked', '');
  c.textContent = label;
  return c;
}

type Valued = HTMLElement & { value?: string; checked?: boolean; disabled?: boolean };

export function getValue(control: HTMLElement): string {
  return String((control as Valued).value ?? control.getAttribute('value') ?? '');
}

export function setValue(control: HTMLElement, value: string): void {
  (control as Valued).value = value;
  control.setAttribute('current-value', value);
}

export function isChecked(control: HTMLElement): boolean {
  return Boolean((control as Valued).checked);
}

export function setDisabled(control: HTMLElement, disabled: boolean): void {
  (control as Valued).disabled = disabled;
  control.toggleAttribute('disabled', disabled);
}

/** 'change' fires on commit for every toolkit control; text fields also emit it on blur/Enter. */
export function onChange(control: HTMLElement, handler: () => void): void {
  control.addEventListener('change', handler);
}
