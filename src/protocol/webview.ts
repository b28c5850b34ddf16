/**
 * Messages between the extension's plan panel and the webview, declared once
 * and imported by both sides (src/extension/ and webview/). Data reaches the
 * webview only through these messages, never interpolated into HTML.
 */
import type { Objective, PlanOutcome, StrategyMode } from './plan';

/** Controls the user can change in the panel; a change asks the server to re-plan. */
export interface PlanControls {
  gpus?: number;
  objective: Objective;
  strategies: StrategyMode;
  batch: number;
}

/** Extension → webview. */
export type ToWebviewMessage =
  | { type: 'plan'; outcome: PlanOutcome; controls: PlanControls; maxGpus: number; modelUri?: string }
  | { type: 'busy'; message: string }
  | { type: 'error'; message: string };

/** Webview → extension. */
export type FromWebviewMessage =
  | { type: 'ready' }
  | { type: 'reveal'; layer: string; line: number; file?: string }
  | { type: 'replan'; controls: PlanControls }
  | { type: 'exportTrace' }
  | { type: 'applyToConfig' };

/** State the webview persists with `setState`, so a reload restores the panel (see the serializer). */
export interface WebviewPersistedState {
  modelUri?: string;
  model?: string;
  controls?: PlanControls;
  view?: 'assignment' | 'timeline' | 'scaling';
}

export const PLAN_VIEW_TYPE = 'wap.plan';
