/**
 * Canvas drawing of the timeline. One fillRect per event inside the window
 * (events are culled by binary search per lane), idle time shows as hatching
 * behind the bars of each GPU lane, critical-path events get a bracket.
 * Returns how many bars of each kind it drew, so the DOM can expose the
 * count and tests can check that every compute event became a bar.
 */
import type { ScaleLinear } from 'd3-scale';
import type { TimelineKind } from '../src/protocol/plan';
import type { Palette } from './theme';
import { visibleRange, type TimelineModel } from './timelineModel';

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

export type DrawCounts = Record<TimelineKind, number> & { total: number; critical: number };

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

export function drawTimeline(d: DrawInput): DrawCounts {
  const { ctx, model, boxes, x, width, height, dpr, palette } = d;
  const counts: DrawCounts = { forward: 0, backward: 0, allreduce: 0, transfer: 0, update: 0, total: 0, critical: 0 };
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const [t0, t1] = x.domain();
  const stepX0 = Math.max(0, x(0));
  const stepX1 = Math.min(width, x(model.endMs));

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
    const px = Math.round(x(t)) + 0.5;
    ctx.moveTo(px, 0);
    ctx.lineTo(px, height);
  }
  ctx.stroke();

  const critical: Array<[number, number, number, number]> = [];
  const outline = palette.barOutline !== 'transparent' && palette.barOutline !== 'rgba(0, 0, 0, 0)' ? palette.barOutline : '';
  const outlines: Array<[number, number, number, number]> = [];
  // One pass per kind so fillStyle is set five times per frame, not once per bar (colour parsing and
  // broken batching made per-bar switches ~10x slower at 20,000 events).
  const kinds = Object.keys(palette.kind) as TimelineKind[];
  const ranges = model.lanes.map((lane) => visibleRange(lane, t0, t1));
  for (const kind of kinds) {
    ctx.fillStyle = palette.kind[kind];
    for (let pass = 0; pass < (d.dimNonCritical ? 2 : 1); pass++) {
      // With dimming on, non-critical bars go in a translucent first pass, critical ones in an opaque second.
      ctx.globalAlpha = d.dimNonCritical && pass === 0 ? 0.3 : 1;
      model.lanes.forEach((lane, i) => {
        const b = boxes[i];
        const y = b.top + 3;
        const h = b.height - 6;
        const [lo, hi] = ranges[i];
        for (let k = lo; k < hi; k++) {
          const ev = lane.events[k];
          if (ev.kind !== kind) continue;
          if (d.dimNonCritical && Boolean(ev.critical) !== (pass === 1)) continue;
          let x0 = x(lane.starts[k]);
          let x1 = x(lane.ends[k]);
          if (x1 < 0 || x0 > width) continue;
          if (x0 < -2) x0 = -2;
          if (x1 > width + 2) x1 = width + 2;
          let w = x1 - x0;
          // Adjacent bars stay distinguishable: a 1px gap once bars are wide enough.
          if (w > 4) w -= 1;
          else if (w < 1) w = 1;
          ctx.fillRect(x0, y, w, h);
          counts[kind]++;
          counts.total++;
          if (ev.critical) critical.push([x0, y, w, h]);
          if (outline && w >= 3) outlines.push([x0, y, w, h]);
        }
      });
    }
  }
  ctx.globalAlpha = 1;
  if (outlines.length) {
    ctx.strokeStyle = outline;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const [x0, y, w, h] of outlines) ctx.rect(x0 + 0.5, y + 0.5, w - 1, h - 1);
    ctx.stroke();
  }

  // Critical path: a bracket above and below each bar, outside the bar itself so its colour stays readable at any width.
  if (critical.length) {
    ctx.fillStyle = palette.critical;
    for (const [x0, y, w, h] of critical) {
      ctx.fillRect(x0, y - 3, Math.max(w, 2), 2);
      ctx.fillRect(x0, y + h + 1, Math.max(w, 2), 2);
    }
    counts.critical = critical.length;
  }

  // Step end marker.
  if (x(model.endMs) >= 0 && x(model.endMs) <= width) {
    ctx.strokeStyle = palette.foreground;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    const px = Math.round(x(model.endMs)) + 0.5;
    ctx.moveTo(px, 0);
    ctx.lineTo(px, height);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  return counts;
}
