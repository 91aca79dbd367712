/** Where things are, from a compiled test in out-test/test/. */
import * as path from "node:path";

export const PACKAGE_ROOT = path.resolve(__dirname, "..", "..");
/** The repository root; $CTX_LSP_REPO when the package is built from a copy elsewhere. */
export const REPO_ROOT = process.env.CTX_LSP_REPO || path.resolve(PACKAGE_ROOT, "..", "..");
