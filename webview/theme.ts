/**
 * Colours come from CSS custom properties defined in media/webview.css
 * (`--wap-*`, each mapped onto a VS Code theme variable with a fallback).
 * SVG and HTML use them directly in CSS; the canvas timeline reads the
 * resolved values here and re-reads them when VS Code switches themes
 * (it changes the body class and inline style).
 */
import type { TimelineKind } from '../src/protocol/plan';

export const KINDS: TimelineKind[] = ['forward', 'backward', 'recompute', 'allreduce', 'allgather', 'reducescatter', 'alltoall', 'transfer', 'update'];

export interface Palette {
  kind: Record<TimelineKind, string>;
  critical: string;
  laneBg: string;
  idle: string;
  grid: string;
  foreground: string;
  barOutline: string;
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const v = style.getPropertyValue(name).trim();
  return v || fallback;
}

export function readPalette(): Palette {
  const s = getComputedStyle(document.body);
  return {
    kind: {
      forward: cssVar(s, '--wap-forward', '#3794ff'),
      backward: cssVar(s, '--wap-backward', '#b180d7'),
      allreduce: cssVar(s, '--wap-allreduce', '#f14c4c'),
      transfer: cssVar(s, '--wap-transfer', '#d18616'),
      update: cssVar(s, '--wap-update', '#89d185'),
      recompute: cssVar(s, '--wap-recompute', '#4ec9b0'),
      allgather: cssVar(s, '--wap-allgather', '#e2777a'),
      reducescatter: cssVar(s, '--wap-reducescatter', '#c72e2e'),
      alltoall: cssVar(s, '--wap-alltoall', '#ff8c69'),
    },
    critical: cssVar(s, '--wap-critical', '#cca700'),
    laneBg: cssVar(s, '--wap-lane-bg', 'rgba(128,128,128,0.08)'),
    idle: cssVar(s, '--wap-idle', 'rgba(128,128,128,0.35)'),
    grid: cssVar(s, '--wap-grid', 'rgba(128,128,128,0.25)'),
    foreground: cssVar(s, '--wap-fg', '#cccccc'),
    barOutline: cssVar(s, '--wap-bar-outline', 'transparent'),
  };
}

/** Calls `onChange` whenever the theme (body class or inline variables) changes. */
export function watchTheme(onChange: () => void): void {
  new MutationObserver(onChange).observe(document.body, { attributes: true, attributeFilter: ['class', 'style', 'data-vscode-theme-kind'] });
}

export const KIND_LABEL: Record<TimelineKind, string> = {
  forward: 'forward',
  backward: 'backward',
  allreduce: 'all-reduce',
  transfer: 'transfer',
  update: 'update',
  recompute: 'recompute (forward again)',
  allgather: 'all-gather',
  reducescatter: 'reduce-scatter',
  alltoall: 'all-to-all (experts)',
};
