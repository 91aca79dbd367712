/** Asking an interpreter whether it can run the server (Node only; no editor API). */
import { execFile } from "node:child_process";

/** A hung interpreter (a network drive, a broken shim) must not stall activation. */
export const PROBE_TIMEOUT_MS = 10_000;

const PROBE_SCRIPT = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('ctx_lsp') else 3)";

/**
 * Whether `python` can import ctx_lsp (found, not imported: importing takes ~0.5 s). Run
 * from the directory the server would run in, with the same environment, so PYTHONPATH,
 * the user site and the working directory count as they will for `python -m ctx_lsp`.
 */
export function hasCtxLsp(python: string, cwd?: string, timeoutMs: number = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", PROBE_SCRIPT], { cwd, timeout: timeoutMs, windowsHide: true }, (error) => resolve(!error));
  });
}
