/**
 * A tiny hand builder for ModelSpecs, standing in for a frontend: each call
 * appends a layer wired to the previous one (or to explicit inputs) with the
 * canonical attrs documented in src/core/ops.ts.
 */
import type { Attrs, Framework, Layout, LayerSpec, ModelSpec, OpKind, Shape } from '../../src/core/ir';
import { rangeAt } from '../../src/core/ir';

export interface AddOptions {
  inputs?: string[];
  type?: string;
  weightKey?: string;
  id?: string;
}

export class SpecBuilder {
  readonly layers: LayerSpec[] = [];
  last: string;
  private line = 2;

  constructor(
    readonly name: string,
    readonly framework: Framework = 'pytorch',
    readonly options: { layout?: Layout; inputShape?: Shape; inputIds?: string[]; inputDtype?: 'float' | 'int' } = {},
  ) {
    this.last = (options.inputIds ?? ['x'])[0];
  }

  get layout(): Layout {
    return this.options.layout ?? (this.framework === 'pytorch' ? 'channels_first' : 'channels_last');
  }

  add(name: string, op: OpKind, attrs: Attrs = {}, opts: AddOptions = {}): string {
    const id = opts.id ?? name;
    const line = this.line++;
    this.layers.push({
      id,
      name,
      type: opts.type ?? op,
      op,
      attrs,
      inputs: opts.inputs ?? [this.last],
      range: rangeAt(line, 5, line, 5 + name.length),
      ...(opts.weightKey ? { weightKey: opts.weightKey } : {}),
    });
    this.last = id;
    return id;
  }

  conv(name: string, cin: number | undefined, cout: number | undefined, k: number, o: { s?: number; p?: number | 'same' | 'valid'; d?: number; groups?: number; bias?: boolean; rank?: number; inputs?: string[] } = {}): string {
    const rank = o.rank ?? 2;
    const rep = (v: number) => new Array(rank).fill(v);
    const p = o.p ?? 0;
    return this.add(
      name,
      'conv',
      {
        rank,
        ...(cin !== undefined ? { inChannels: cin } : {}),
        ...(cout !== undefined ? { outChannels: cout } : {}),
        kernel: rep(k),
        stride: rep(o.s ?? 1),
        padding: typeof p === 'number' ? rep(0).map(() => [p, p]) : p,
        dilation: rep(o.d ?? 1),
        groups: o.groups ?? 1,
        bias: o.bias ?? true,
      },
      { inputs: o.inputs, type: `Conv${rank}d` },
    );
  }

  linear(name: string, inF: number | undefined, outF: number, bias = true, opts: AddOptions = {}): string {
    return this.add(name, 'linear', { ...(inF !== undefined ? { inFeatures: inF } : {}), outFeatures: outF, bias }, { type: 'Linear', ...opts });
  }

  act(name: string, fn = 'relu', opts: AddOptions = {}): string {
    return this.add(name, 'activation', { fn }, { type: 'ReLU', ...opts });
  }

  bn(name: string, c: number | undefined, o: { trackRunningStats?: boolean; affine?: boolean } = {}): string {
    const affine = o.affine ?? true;
    return this.add(name, 'batchnorm', { ...(c !== undefined ? { numFeatures: c } : {}), scale: affine, center: affine, trackRunningStats: o.trackRunningStats ?? true }, { type: 'BatchNorm2d' });
  }

  maxpool(name: string, k: number, s = k, o: { p?: number | 'same' | 'valid'; ceilMode?: boolean; mode?: 'max' | 'avg'; inputs?: string[] } = {}): string {
    const p = o.p ?? 0;
    return this.add(
      name,
      'pool',
      { rank: 2, mode: o.mode ?? 'max', kernel: [k, k], stride: [s, s], padding: typeof p === 'number' ? [[p, p], [p, p]] : p, ceilMode: o.ceilMode ?? false },
      { type: 'MaxPool2d', inputs: o.inputs },
    );
  }

  build(inputShape: Shape | undefined = this.options.inputShape, outputs: string[] = [this.last]): ModelSpec {
    const ids = this.options.inputIds ?? ['x'];
    return {
      name: this.name,
      framework: this.framework,
      range: rangeAt(1, 1, this.line, 1),
      layout: this.layout,
      inputs: ids.map((id, i) => ({ id, ...(i === 0 && inputShape ? { shape: inputShape } : {}), ...(this.options.inputDtype ? { dtype: this.options.inputDtype } : {}) })),
      layers: this.layers,
      outputs,
      diagnostics: [],
    };
  }
}
