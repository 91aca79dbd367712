/**
 * *Copy Context Bundle for Agent…*: the agent table, the `ctx/bundle` params built from the
 * editors, the message after copying, and `ctx.explain` as a document.
 */
import type { BundleParams, BundleResult, Decision, Explanation } from "./protocol";
import type { BundleSettings } from "./settings";
import { formatCount, formatTokens, percentOf } from "./status";

export interface AgentRow {
  tier: number;
  budget: number;
  docsCap: number;
}

/**
 * The server's default agent table (DESIGN.md, ctx_lsp/config.py `_agents`). The server
 * has no request that lists it, so the extension carries a copy; `ctxLsp.agents` changes
 * and extends it the same way the server does.
 */
export const DEFAULT_AGENTS: Readonly<Record<string, AgentRow>> = {
  default: { tier: 2, budget: 4000, docsCap: 2500 },
  planner: { tier: 1, budget: 4000, docsCap: 2500 },
  analyst: { tier: 1, budget: 4000, docsCap: 2500 },
  reviewer: { tier: 1, budget: 4000, docsCap: 3000 },
  architect: { tier: 2, budget: 6000, docsCap: 4000 },
  designer: { tier: 2, budget: 6000, docsCap: 4000 },
  implementer: { tier: 2, budget: 6000, docsCap: 3000 },
  tester: { tier: 2, budget: 4000, docsCap: 2500 },
  debugger: { tier: 3, budget: 8000, docsCap: 3000 },
};

const TIER_NAMES: Record<number, string> = { 1: "outline", 2: "focused", 3: "full" };

/**
 * The defaults overlaid with the `agents` server option (as built by settings.ts: snake_case
 * `docs_cap`). A new name starts as a copy of `default`, as on the server.
 */
export function agentTable(configured: unknown): Record<string, AgentRow> {
  const table: Record<string, AgentRow> = {};
  for (const [name, row] of Object.entries(DEFAULT_AGENTS)) table[name] = { ...row };
  if (typeof configured !== "object" || configured === null) return table;
  for (const [name, raw] of Object.entries(configured as Record<string, unknown>)) {
    if (typeof raw !== "object" || raw === null) continue;
    const row = raw as Record<string, unknown>;
    const base = { ...(table[name] ?? table.default) };
    if (typeof row.tier === "number") base.tier = row.tier;
    if (typeof row.budget === "number") base.budget = row.budget;
    const cap = row.docs_cap ?? row.docsCap;
    if (typeof cap === "number") base.docsCap = cap;
    table[name] = base;
  }
  return table;
}

export interface AgentPickItem {
  label: string;
  description: string;
  agent: string;
}

/** Quick pick rows: the last agent used first, then the table's order. */
export function agentPickItems(table: Record<string, AgentRow>, lastUsed?: string): AgentPickItem[] {
  const names = Object.keys(table);
  if (lastUsed && names.includes(lastUsed)) {
    names.splice(names.indexOf(lastUsed), 1);
    names.unshift(lastUsed);
  }
  return names.map((agent) => {
    const row = table[agent];
    return {
      label: agent,
      description: `tier ${row.tier} (${TIER_NAMES[row.tier] ?? "?"}) · ${formatCount(row.budget)} tokens · docs cap ${formatCount(row.docsCap)}`,
      agent,
    };
  });
}

export interface EditorFocus {
  uri: string;
  line: number;
  character: number;
}

export interface BundleInputs {
  agent: string;
  query: string;
  /** The active editor's document and cursor. */
  active?: EditorFocus;
  /** URIs of the documents in the visible editors. */
  visible: readonly string[];
  /** Workspace folder URIs (`Uri.toString()`). */
  folders: readonly string[];
  settings: BundleSettings;
}

export interface BuiltBundleParams {
  params: BundleParams;
  /** Editors left out (outside the workspace, or not files), for the log. */
  skipped: string[];
}

/** Whether `uri` is a file inside one of the folders: the server refuses anything else. */
export function isInsideFolders(uri: string, folders: readonly string[]): boolean {
  if (!uri.startsWith("file:")) return false;
  return folders.some((folder) => {
    const root = folder.endsWith("/") ? folder : `${folder}/`;
    return uri.startsWith(root);
  });
}

/**
 * `ctx/bundle` params: the active editor is the `focus`, the other visible editors are
 * `open`. A URI outside the workspace folders fails the whole request on the server, so
 * such editors are left out here.
 */
export function buildBundleParams(inputs: BundleInputs): BuiltBundleParams {
  const skipped: string[] = [];
  const params: BundleParams = { agent: inputs.agent };
  const query = inputs.query.trim();
  if (query) params.query = query;
  let focusUri: string | undefined;
  if (inputs.active) {
    if (isInsideFolders(inputs.active.uri, inputs.folders)) {
      focusUri = inputs.active.uri;
      params.focus = { uri: focusUri, position: { line: inputs.active.line, character: inputs.active.character } };
    } else {
      skipped.push(inputs.active.uri);
    }
  }
  if (inputs.settings.includeVisibleEditors) {
    const open: string[] = [];
    for (const uri of inputs.visible) {
      if (uri === focusUri || open.includes(uri)) continue;
      if (isInsideFolders(uri, inputs.folders)) open.push(uri);
      else if (!skipped.includes(uri)) skipped.push(uri);
    }
    if (open.length) params.open = open;
  }
  if (inputs.settings.budget !== undefined) params.budget = inputs.settings.budget;
  if (inputs.settings.profile) params.profile = inputs.settings.profile;
  params.format = inputs.settings.format;
  return { params, skipped };
}

/** The notification after the bundle is on the clipboard. */
export function bundleMessage(agent: string, result: Pick<BundleResult, "total_tokens" | "budget" | "sections" | "snapshot">): string {
  const sections = result.sections?.length ?? 0;
  const warnings = result.snapshot?.warnings?.length ?? 0;
  const tail = warnings ? ` ${warnings} warning${warnings === 1 ? "" : "s"}: see Explain Last Bundle.` : "";
  return (
    `Copied the ${agent} bundle: ${formatTokens(result.total_tokens)} of ${formatTokens(result.budget)} tokens ` +
    `(${percentOf(result.total_tokens, result.budget)}%), ${sections} section${sections === 1 ? "" : "s"}.${tail}`
  );
}

function cell(text: unknown): string {
  return String(text ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
}

function num(value: unknown, digits: number): string {
  return typeof value === "number" ? value.toFixed(digits) : "";
}

function byRank(a: Decision, b: Decision): number {
  return (b.rank ?? 0) - (a.rank ?? 0) || String(a.path).localeCompare(String(b.path));
}

/** `ctx.explain` as Markdown: what went in (by rank), then what stayed out and why. */
export function renderExplanation(ex: Explanation): string {
  const lines: string[] = [];
  lines.push(`# Why the last bundle holds what it holds`);
  lines.push("");
  lines.push(`- Agent: **${ex.agent}**`);
  lines.push(`- Query: ${ex.query ? `\`${ex.query.replace(/`/g, "'")}\`` : "(none)"}`);
  lines.push(
    `- Tokens: ${formatCount(ex.total_tokens)} of ${formatCount(ex.budget)} (${percentOf(ex.total_tokens, ex.budget)}%)` +
      (typeof ex.elapsed_ms === "number" ? `, assembled in ${ex.elapsed_ms} ms` : ""),
  );
  const candidates = ex.candidates ?? [];
  const included = candidates.filter((c) => c.included).sort(byRank);
  const excluded = candidates.filter((c) => !c.included).sort(byRank);
  lines.push(`- Candidates: ${candidates.length} (${included.length} in, ${excluded.length} out)`);
  const table = (title: string, rows: Decision[]): void => {
    lines.push("", `## ${title}`, "");
    if (rows.length === 0) {
      lines.push("(none)");
      return;
    }
    lines.push("| rank | salience | contributor | path | tier | tokens | outcome | reason |");
    lines.push("| ---: | ---: | --- | --- | ---: | ---: | --- | --- |");
    for (const c of rows) {
      lines.push(
        `| ${num(c.rank, 3)} | ${num(c.salience, 2)} | ${cell(c.contributor)} | ${cell(c.path)} | ${c.tier ?? ""} | ` +
          `${c.tokens ?? ""} | ${cell(c.outcome)} | ${cell(c.reason)} |`,
      );
    }
  };
  table("In the bundle", included);
  table("Left out", excluded);
  return lines.join("\n") + "\n";
}
