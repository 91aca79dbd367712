/**
 * The Python extension's active interpreter, asked the way vscode-python-tools-extension-template
 * does (`src/common/python.ts`): activate `ms-python.python` if it is installed, then ask its
 * API for the active environment of a resource and resolve it to an executable.
 *
 * The API is typed here by the few members used, so the extension needs no extra package,
 * and both its current (`environments`) and older (`environment`) shapes are accepted.
 */
import * as vscode from "vscode";

export const PYTHON_EXTENSION_ID = "ms-python.python";

/** Resolving an environment can wait on the Python extension's discovery; not forever. */
const RESOLVE_TIMEOUT_MS = 15_000;

interface EnvironmentPath {
  id?: string;
  path: string;
}

interface ResolvedEnvironment {
  executable?: { uri?: vscode.Uri };
}

interface EnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath | undefined;
  resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  ready?: Promise<void>;
  environments?: EnvironmentsApi;
  environment?: EnvironmentsApi;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

async function environmentsApi(): Promise<EnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) return undefined;
  const api = extension.isActive ? extension.exports : await extension.activate();
  if (api?.ready) await withTimeout(api.ready, RESOLVE_TIMEOUT_MS);
  const envs = api?.environments ?? api?.environment;
  return envs && typeof envs.getActiveEnvironmentPath === "function" ? envs : undefined;
}

/** The active interpreter's executable for `resource`, or undefined (no extension, no env). */
export async function activePythonInterpreter(resource?: vscode.Uri, log?: vscode.LogOutputChannel): Promise<string | undefined> {
  try {
    const envs = await environmentsApi();
    const active = envs?.getActiveEnvironmentPath(resource);
    if (!envs || !active) return undefined;
    const resolved = await withTimeout(envs.resolveEnvironment(active), RESOLVE_TIMEOUT_MS);
    return resolved?.executable?.uri?.fsPath;
  } catch (err) {
    log?.warn(`could not ask the Python extension for its interpreter: ${String(err)}`);
    return undefined;
  }
}

/** Call `listener` when the Python extension's active interpreter changes (if it is installed). */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const envs = await environmentsApi();
    return envs?.onDidChangeActiveEnvironmentPath?.(() => listener());
  } catch {
    return undefined;
  }
}
