/**
 * Trial worker process (forked by the profiler; bundled to dist/trialWorker.js).
 * Loads one tfjs backend, then builds and times one layer per request. It runs
 * only layer specs (op + attrs + shapes), never user code. A crash or OOM here
 * costs one layer: the parent reports it and starts a fresh worker.
 * Layers are built with the tf namespace loadBackend chose (./tfRuntime).
 */
import type { BackendId } from '../../protocol/profile';
import { loadBackend } from '../tfjs/loadBackend';
import { Unsupported } from './builtLayer';
import type { ParentMessage, WorkerMessage } from './messages';
import { timeCopies, timeLayer, timeWholeStep } from './timing';

let backend: BackendId | undefined;

function send(msg: WorkerMessage): void {
  process.send?.(msg);
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 500);

async function handle(msg: ParentMessage): Promise<void> {
  if (msg.type !== 'init' && msg.type !== 'exit' && backend === undefined) {
    // No namespace is chosen before init: say so instead of failing on an undefined `tf`.
    send({ type: 'failed', id: msg.id, error: 'the worker got a request before a backend was loaded' });
    return;
  }
  switch (msg.type) {
    case 'init':
      try {
        const loaded = await loadBackend(msg.backend);
        backend = loaded.id;
        send({ type: 'ready', deviceName: loaded.deviceName, version: loaded.version, backend: loaded.id, runtime: loaded.runtime });
      } catch (err) {
        send({ type: 'initFailed', error: messageOf(err) });
      }
      return;
    case 'trial':
      try {
        const t = await timeLayer(msg.spec, msg.batch, msg.warmup, msg.repetitions, backend!);
        send({ type: 'result', id: msg.id, ...t });
      } catch (err) {
        if (err instanceof Unsupported) send({ type: 'unsupported', id: msg.id, reason: err.message });
        else send({ type: 'failed', id: msg.id, error: messageOf(err) });
      }
      return;
    case 'copy':
      try {
        send({ type: 'copyResult', id: msg.id, points: await timeCopies(msg.sizesBytes, msg.repetitions) });
      } catch (err) {
        send({ type: 'failed', id: msg.id, error: messageOf(err) });
      }
      return;
    case 'wholeStep':
      try {
        const s = await timeWholeStep(msg.specs, msg.inputs, msg.outputs, msg.batch, msg.warmup, msg.repetitions, backend!);
        send({ type: 'wholeStepResult', id: msg.id, ms: s.median, spread: s.spread });
      } catch (err) {
        if (err instanceof Unsupported) send({ type: 'unsupported', id: msg.id, reason: err.message });
        else send({ type: 'failed', id: msg.id, error: messageOf(err) });
      }
      return;
    case 'exit':
      process.exit(0);
  }
}

// Requests run one at a time, in order.
let queue = Promise.resolve();
process.on('message', (msg: ParentMessage) => {
  queue = queue.then(() => handle(msg));
});
// The parent went away: nothing left to report to.
process.on('disconnect', () => process.exit(0));
