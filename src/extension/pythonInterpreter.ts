/**
 * The interpreter selected in the Python extension, through its public
 * environments API (`ms-python.python` exports
 * `environments.getActiveEnvironmentPath()` and
 * `onDidChangeActiveEnvironmentPath`). Absent extension, older API or any
 * failure → undefined: the server then uses `wap.python`, else `python3`.
 * Nothing here spawns a process; the server probes the interpreter, and only
 * in trusted workspaces.
 */
import * as vscode from 'vscode';

interface EnvironmentPath {
  path: string;
}
interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath | undefined;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}
interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    return typeof api?.environments?.getActiveEnvironmentPath === 'function' ? api.environments : undefined;
  } catch {
    return undefined;
  }
}

/** The selected interpreter's path for the first workspace folder, if the Python extension offers one. */
export async function selectedPythonInterpreter(): Promise<string | undefined> {
  const api = await environmentsApi();
  if (!api) return undefined;
  try {
    const path = api.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri)?.path;
    return path && path.trim() ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `onChange` with the new selection whenever the user picks another environment. */
export async function watchPythonInterpreter(onChange: (path: string | undefined) => void): Promise<vscode.Disposable | undefined> {
  const api = await environmentsApi();
  if (!api?.onDidChangeActiveEnvironmentPath) return undefined;
  return api.onDidChangeActiveEnvironmentPath(() => {
    void selectedPythonInterpreter().then(onChange);
  });
}
