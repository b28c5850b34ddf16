/**
 * Canvas drawing of the timeline. One rectangle per event inside the window
 * (events are culled by binary search per lane; runs of touching sub-pixel
 * bars of one kind share a rectangle), idle time shows as hatching
 * behind the bars of each GPU lane, critical-path events get a bracket.
 * Returns how many bars of each kind it drew, so the DOM can expose the
 * count and tests can check that every compute event became a bar.
 */
import type { ScaleLinear } from 'd3-scale';
import type { TimelineKind } from '../src/protocol/plan';
import type { Palette } from './theme';
import { emptyCounts, visibleRange, type TimelineModel } from './timelineModel';

export interface LaneBox {
  top: number;
  height: number;
}

export interface DrawInput {
  ctx: CanvasRenderingContext2D;
  model: TimelineModel;
  boxes: LaneBox[];
  x: ScaleLinear<number, number>;
  width: number;
  height: number;
  dpr: number;
  palette: Palette;
  dimNonCritical: boolean;
}

/** Events drawn per kind (each visible event is counted once, merged or not), critical ones, and rectangles painted. */
export type DrawCounts = Record<TimelineKind, number> & { total: number; critical: number; rects: number };

let hatchCache: { key: string; pattern: CanvasPattern | null } | undefined;

function hatch(ctx: CanvasRenderingContext2D, color: string, dpr: number): CanvasPattern | null {
  const key = `${color}@${dpr}`;
  if (hatchCache?.key === key) return hatchCache.pattern;
  const size = Math.round(6 * dpr);
  const c = document.createElement('canvas');
  c.width = size;
  c.height = size;
  const p = c.getContext('2d')!;
  p.strokeStyle = color;
  p.lineWidth = Math.max(1, dpr);
  p.beginPath();
  p.moveTo(0, size);
  p.lineTo(size, 0);
  p.stroke();
  const pattern = ctx.createPattern(c, 'repeat');
  pattern?.setTransform(new DOMMatrix().scale(1 / dpr));
  hatchCache = { key, pattern };
  return pattern;
}

/** Bars narrower than this (CSS px) merge with a touching narrow bar of the same kind in the same lane. */
const MERGE_MAX_W = 2;
const MERGE_GAP = 0.5;

/**
 * Rectangles to paint, where a run of touching sub-pixel bars becomes one
 * rectangle. At full view 20,000 events on a 1,400 px canvas are mostly
 * narrower than a pixel: painting each costs time and changes no pixel that
 * the union does not. Wide bars are never merged, so each stays its own bar.
 */
class RectList {
  private readonly data: number[] = [];
  private px0 = 0;
  private px1 = 0;
  private py = 0;
  private ph = 0;
  private pending = false;
  private pendingMergeable = false;

  get length(): number {
    return this.data.length / 4 + (this.pending ? 1 : 0);
  }

  add(x: number, y: number, w: number, h: number, mergeable: boolean): void {
    if (this.pending && mergeable && this.pendingMergeable && y === this.py && h === this.ph && x <= this.px1 + MERGE_GAP) {
      if (x + w > this.px1) this.px1 = x + w;
      return;
    }
    this.endRun();
    this.px0 = x;
    this.px1 = x + w;
    this.py = y;
    this.ph = h;
    this.pending = true;
    this.pendingMergeable = mergeable;
  }

  /** Closes the open run (call at the end of each lane so runs never span lanes). */
  endRun(): void {
    if (!this.pending) return;
    this.data.push(this.px0, this.py, this.px1 - this.px0, this.ph);
    this.pending = false;
  }

  each(fn: (x: number, y: number, w: number, h: number) => void): void {
    this.endRun();
    const d = this.data;
    for (let i = 0; i < d.length; i += 4) fn(d[i], d[i + 1], d[i + 2], d[i + 3]);
  }

  /** Fills every rectangle with the current fillStyle; returns how many. */
  fill(ctx: CanvasRenderingContext2D): number {
    this.endRun();
    const d = this.data;
    for (let i = 0; i < d.length; i += 4) ctx.fillRect(d[i], d[i + 1], d[i + 2], d[i + 3]);
    return d.length / 4;
  }
}

export function drawTimeline(d: DrawInput): DrawCounts {
  const { ctx, model, boxes, x, width, height, dpr, palette } = d;
  const counts: DrawCounts = { ...emptyCounts(), total: 0, critical: 0, rects: 0 };
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const [t0, t1] = x.domain();
  const [r0, r1] = x.range();
  // The scale is linear: map times with one multiply-add instead of ~40,000 d3 scale calls per frame.
  const k = (r1 - r0) / (t1 - t0 || 1);
  const px = (t: number): number => r0 + (t - t0) * k;
  const stepX0 = Math.max(0, px(0));
  const stepX1 = Math.min(width, px(model.endMs));

  // Lanes: a band, with hatching over the simulated step so idle gaps read as idle.
  const pattern = hatch(ctx, palette.idle, dpr);
  model.lanes.forEach((lane, i) => {
    const b = boxes[i];
    ctx.fillStyle = palette.laneBg;
    ctx.fillRect(0, b.top, width, b.height);
    if (lane.kind === 'gpu' && pattern && stepX1 > stepX0) {
      ctx.fillStyle = pattern;
      ctx.fillRect(stepX0, b.top + 2, stepX1 - stepX0, b.height - 4);
    }
  });

  // Grid lines at the axis ticks.
  ctx.strokeStyle = palette.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of x.ticks(Math.max(2, Math.floor(width / 90)))) {
    const gx = Math.round(px(t)) + 0.5;
    ctx.moveTo(gx, 0);
    ctx.lineTo(gx, height);
  }
  ctx.stroke();

  const kinds = Object.keys(palette.kind) as TimelineKind[];
  const kindIndex = new Map(kinds.map((kind, i) => [kind, i]));
  const ranges = model.lanes.map((lane) => visibleRange(lane, t0, t1));
  const outline = palette.barOutline !== 'transparent' && palette.barOutline !== 'rgba(0, 0, 0, 0)' ? palette.barOutline : '';
  const outlines = new RectList();
  const critical = new RectList();
  const passes = d.dimNonCritical ? 2 : 1;
  for (let pass = 0; pass < passes; pass++) {
    // With dimming on, non-critical bars go in a translucent first pass, critical ones in an opaque second.
    const bars = kinds.map(() => new RectList());
    model.lanes.forEach((lane, i) => {
      const b = boxes[i];
      const y = b.top + 3;
      const h = b.height - 6;
      const [lo, hi] = ranges[i];
      for (let j = lo; j < hi; j++) {
        const ev = lane.events[j];
        if (d.dimNonCritical && Boolean(ev.critical) !== (pass === 1)) continue;
        const ki = kindIndex.get(ev.kind);
        if (ki === undefined) continue;
        let x0 = px(lane.starts[j]);
        let x1 = px(lane.ends[j]);
        if (x1 < 0 || x0 > width) continue;
        if (x0 < -2) x0 = -2;
        if (x1 > width + 2) x1 = width + 2;
        let w = x1 - x0;
        // Adjacent bars stay distinguishable: a 1px gap once bars are wide enough.
        if (w > 4) w -= 1;
        else if (w < 1) w = 1;
        bars[ki].add(x0, y, w, h, w <= MERGE_MAX_W);
        counts[ev.kind]++;
        counts.total++;
        if (ev.critical) {
          critical.add(x0, y, Math.max(w, 2), h, w <= MERGE_MAX_W);
          counts.critical++;
        }
        if (outline && w >= 3) outlines.add(x0, y, w, h, false);
      }
      for (const list of bars) list.endRun();
      critical.endRun();
    });
    ctx.globalAlpha = d.dimNonCritical && pass === 0 ? 0.3 : 1;
    // One fillStyle per kind per pass: colour parsing and broken batching made per-bar switches ~10x slower.
    bars.forEach((list, ki) => {
      ctx.fillStyle = palette.kind[kinds[ki]];
      counts.rects += list.fill(ctx);
    });
  }
  ctx.globalAlpha = 1;
  if (outlines.length) {
    ctx.strokeStyle = outline;
    ctx.lineWidth = 1;
    ctx.beginPath();
    outlines.each((x0, y, w, h) => ctx.rect(x0 + 0.5, y + 0.5, w - 1, h - 1));
    ctx.stroke();
  }

  // Critical path: a bracket above and below each bar, outside the bar itself so its colour stays readable at any width.
  if (critical.length) {
    ctx.fillStyle = palette.critical;
    critical.each((x0, y, w, h) => {
      ctx.fillRect(x0, y - 3, w, 2);
      ctx.fillRect(x0, y + h + 1, w, 2);
    });
  }

  // Step end marker.
  const endX = px(model.endMs);
  if (endX >= 0 && endX <= width) {
    ctx.strokeStyle = palette.foreground;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(Math.round(endX) + 0.5, 0);
    ctx.lineTo(Math.round(endX) + 0.5, height);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  return counts;
}
