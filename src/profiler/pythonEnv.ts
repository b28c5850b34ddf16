/**
 * The user's Python interpreter: which one, and what it says about itself.
 *
 * Users train from venvs and conda environments, and the `python3` first on
 * PATH is often not the one with torch, so the interpreter is always
 * choosable: an explicit path (CLI `--python`, the Python extension's selected
 * environment, the `wap.python` setting), else `WAP_PYTHON`, else `python3`.
 *
 * One probe per interpreter per process asks for `sys.path`, the Python
 * version and the torch version. The probe imports torch only inside a
 * try/except and never imports or runs user code; library sources found on
 * `sys.path` are read statically by the frontends. Like every child process,
 * it lives in the profiler room and callers must only invoke it in trusted
 * workspaces.
 */
import { execFile } from 'node:child_process';

export interface PythonInfo {
  /** The path or command that was run. */
  interpreter: string;
  ok: boolean;
  /** Why the probe failed (interpreter missing, crashed, timed out). */
  reason?: string;
  /** `sys.executable`, the resolved binary. */
  executable?: string;
  /** e.g. '3.11.2'. */
  version?: string;
  /** `sys.path` entries that exist as folders, in order (site-packages among them). */
  sysPath: string[];
  /** `torch.__version__` when torch imports, else undefined. */
  torchVersion?: string;
  /** Why torch did not import, when it did not. */
  torchReason?: string;
  /** `torch.version.cuda` (undefined on CPU-only builds). */
  cudaVersion?: string;
  /** CUDA device names torch sees (empty on CPU-only builds). */
  cudaDevices: string[];
}

/** The interpreter to use: explicit choice, then WAP_PYTHON, then `python3` on PATH. */
export function resolvePython(explicit?: string): string {
  const chosen = explicit?.trim() || process.env.WAP_PYTHON?.trim();
  return chosen || 'python3';
}

const PROBE = [
  'import json, os, sys',
  'out = {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],',
  '       "sysPath": [p for p in sys.path if p and os.path.isdir(p)], "cudaDevices": []}',
  'try:',
  '    import torch',
  '    out["torchVersion"] = torch.__version__',
  '    out["cudaVersion"] = torch.version.cuda',
  '    if torch.cuda.is_available():',
  '        out["cudaDevices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]',
  'except Exception as e:',
  '    out["torchReason"] = "%s: %s" % (type(e).__name__, e)',
  'print(json.dumps(out))',
].join('\n');

const probes = new Map<string, Promise<PythonInfo>>();

/** Probes `interpreter` once per process (argument array, no shell, 60 s bound). */
export function probePython(interpreter: string): Promise<PythonInfo> {
  let p = probes.get(interpreter);
  if (!p) {
    p = runProbe(interpreter);
    probes.set(interpreter, p);
  }
  return p;
}

/** Forget cached probes, e.g. after the user selects another environment. */
export function forgetPythonProbes(): void {
  probes.clear();
}

function runProbe(interpreter: string): Promise<PythonInfo> {
  return new Promise((resolve) => {
    // `-I` isolates from the user's cwd and PYTHON* variables: the probe must not pick up a workspace module named like a library.
    execFile(interpreter, ['-I', '-c', PROBE], { timeout: 60_000, windowsHide: true, maxBuffer: 4 << 20 }, (err, stdout) => {
      const line = String(stdout ?? '').trim().split('\n').pop() ?? '';
      if (line.startsWith('{')) {
        try {
          const parsed = JSON.parse(line) as Omit<PythonInfo, 'interpreter' | 'ok'>;
          return resolve({ interpreter, ok: true, ...parsed, sysPath: parsed.sysPath ?? [], cudaDevices: parsed.cudaDevices ?? [] });
        } catch {
          /* fall through to the failure below */
        }
      }
      const code = err ? (err as NodeJS.ErrnoException).code : undefined;
      const reason = code === 'ENOENT' ? `${interpreter} was not found` : `${interpreter} failed: ${err?.message.split('\n')[0] ?? 'no output'}`;
      resolve({ interpreter, ok: false, reason, sysPath: [], cudaDevices: [] });
    });
  });
}
