/** *Show Symbol*: the `ctx/symbol` params, the pick list for ambiguous names, and the document. */
import type { SymbolMatch, SymbolParams, SymbolResult } from "./protocol";
import { formatCount } from "./status";

/**
 * The name under the cursor: one identifier. Not a dotted chain: `self.engine.bundle`
 * is an expression, not a qualname; the bare name `bundle` finds it.
 */
export const SYMBOL_NAME_PATTERN = /[A-Za-z_][A-Za-z0-9_]*/;

export function symbolParams(name: string): SymbolParams {
  return { name: name.trim(), include_body: true };
}

/**
 * A match picked from an ambiguous list may come without its body (the server spends the
 * body budget on the best matches first): ask again for that one definition.
 */
export function pickedMatchParams(match: SymbolMatch): SymbolParams | undefined {
  if (match.body && !match.truncated) return undefined;
  return { name: match.qualname, path: match.path, include_body: true };
}

/** A name typed into the input box: something to look up, or why not. */
export function validateSymbolName(name: string): string | undefined {
  const trimmed = name.trim();
  if (!trimmed) return "Type a symbol name, e.g. Engine.bundle or parse_bundle";
  if (/\s/.test(trimmed)) return "A symbol name has no spaces";
  return undefined;
}

export interface SymbolPickItem {
  label: string;
  description: string;
  detail?: string;
  index: number;
}

export function lineSpan(match: SymbolMatch): string {
  const { start_line: start, end_line: end } = match.range ?? { start_line: 0, end_line: 0 };
  return start === end ? `${start}` : `${start}-${end}`;
}

/** One row per match: qualname, where it is, its signature. */
export function symbolPickItems(matches: readonly SymbolMatch[]): SymbolPickItem[] {
  return matches.map((m, index) => ({
    label: m.qualname,
    description: `${m.kind} · ${m.path}:${lineSpan(m)}`,
    detail: m.signature || undefined,
    index,
  }));
}

const FENCES: Record<string, string> = {
  py: "python",
  pyi: "python",
  ts: "typescript",
  tsx: "tsx",
  js: "javascript",
  jsx: "jsx",
  md: "markdown",
  go: "go",
  rs: "rust",
  toml: "toml",
  json: "json",
  lua: "lua",
};

/** The code fence language for a path's extension ("" when unknown). */
export function fenceLanguage(path: string): string {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : (FENCES[path.slice(dot + 1).toLowerCase()] ?? "");
}

function fence(code: string, language: string): string {
  const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${language}\n${code.replace(/\s+$/, "")}\n${ticks}`;
}

/** The matches as Markdown: a heading, where it is, then the body (or the signature). */
export function renderSymbolMatches(result: SymbolResult, matches: readonly SymbolMatch[] = result.matches): string {
  const lines: string[] = [];
  const name = result.name ?? matches[0]?.qualname ?? "symbol";
  if (matches.length === 0) {
    lines.push(`# ${name}`, "", "No symbol by that name in the index.");
    if (result.note) lines.push("", result.note);
    return lines.join("\n") + "\n";
  }
  const total = result.total_matches ?? result.matches.length;
  if (total > matches.length) lines.push(`<!-- showing ${matches.length} of ${total} matches for ${name} -->`, "");
  for (const m of matches) {
    lines.push(`# ${m.qualname}`, "");
    const tokens = typeof m.tokens === "number" ? ` · ${formatCount(m.tokens)} tokens` : "";
    lines.push(`${m.kind} in \`${m.path}\`, lines ${lineSpan(m)}${tokens}${m.truncated ? " · truncated" : ""}`, "");
    const code = m.body ?? m.signature ?? "";
    if (code) lines.push(fence(code, fenceLanguage(m.path)), "");
  }
  if (result.note) lines.push(`> ${result.note.replace(/\n/g, "\n> ")}`, "");
  return lines.join("\n");
}
