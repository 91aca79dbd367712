/**
 * The Python that runs the real server in tests: $CTX_LSP_PYTHON, else the first of
 * `python`, `python3` on PATH that can import ctx_lsp.
 */
import { execFileSync } from "node:child_process";

const FIND = "import sys, importlib.util; sys.exit(3) if importlib.util.find_spec('ctx_lsp') is None else print(sys.executable)";

let cached: string | undefined;

/** The absolute path of the test interpreter (the server reads `python.interpreter` literally). */
export function testPython(): string {
  if (cached !== undefined) return cached;
  const candidates = process.env.CTX_LSP_PYTHON ? [process.env.CTX_LSP_PYTHON] : ["python", "python3"];
  for (const python of candidates) {
    try {
      cached = execFileSync(python, ["-c", FIND], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      return cached;
    } catch {
      // not there, or no ctx_lsp
    }
  }
  throw new Error(
    `no Python with ctx-lsp installed among ${candidates.join(", ")}: ` +
      "set CTX_LSP_PYTHON to one (python -m pip install -e . at the repository root)",
  );
}
