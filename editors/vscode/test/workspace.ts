/** A small Python workspace on disk for the end-to-end tests. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

export const ENGINE_PY = `"""The engine: assembles bundles."""
from pkg.other import Other


class Engine:
    """Owns the index."""

    def bundle(self, query: str) -> str:
        """Make a bundle for a query."""
        return Other().bundle() + query

    def status(self) -> dict:
        return {}
`;

export const OTHER_PY = `class Other:
    def bundle(self) -> str:
        return "other"
`;

export interface Workspace {
  root: string;
  folderUri: string;
  uri(rel: string): string;
  remove(): void;
}

export function makeWorkspace(prefix: string): Workspace {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const files: Record<string, string> = {
    "pkg/__init__.py": "",
    "pkg/engine.py": ENGINE_PY,
    "pkg/other.py": OTHER_PY,
    "README.md": "# Demo\n\nA demo project for the VS Code extension's end-to-end tests.\n",
    "generated/big_pb2.py": "GENERATED = 1\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return {
    root,
    folderUri: pathToFileURL(root).href,
    uri: (rel) => pathToFileURL(path.join(root, rel)).href,
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}
