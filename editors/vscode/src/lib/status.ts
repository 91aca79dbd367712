/**
 * The status bar item's state and text, and the plain-text status report.
 *
 * The item shows, most urgent first: a server that is not running, indexing (or any other
 * work-done progress the server reports), then how the last bundle used its budget.
 */
import type { BundleResult, StatusResult, WorkDoneProgressValue } from "./protocol";

/**
 * Compact token counts: 950, 7.6K, 12.3K, 128K, 1.2M. Rounded *down*, so a bundle just under
 * its budget never shows as full (7,960 of 8,000 is "7.9K/8K", not "8K/8K").
 */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n)) return "?";
  const sign = n < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(n));
  // Integer arithmetic: 7600 / 100 is exactly 76 tenths, where 7.6 * 10 need not be 76.
  const scaled = (unitSize: number, unit: string): string => {
    const tenths = Math.floor(abs / (unitSize / 10));
    const text = tenths >= 1000 || tenths % 10 === 0 ? String(Math.floor(tenths / 10)) : `${Math.floor(tenths / 10)}.${tenths % 10}`;
    return `${sign}${text}${unit}`;
  };
  if (abs < 1000) return `${sign}${abs}`;
  if (abs < 1_000_000) return scaled(1000, "K");
  return scaled(1_000_000, "M");
}

/** Whole percent, rounded down (100 % only when the budget is really used up). */
export function percentOf(used: number, budget: number): number {
  if (!(budget > 0)) return 0;
  return Math.floor((100 * used) / budget);
}

/** `7.6K/8K (95%)`. */
export function formatBudgetUse(used: number, budget: number): string {
  return `${formatTokens(used)}/${formatTokens(budget)} (${percentOf(used, budget)}%)`;
}

/** Thousands separators without depending on the host's locale. */
export function formatCount(n: number | undefined): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "?";
  return Math.trunc(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export type ServerState = "starting" | "running" | "stopped" | "failed";

export interface LastBundle {
  agent: string;
  totalTokens: number;
  budget: number;
  sections: number;
}

export interface StatusBarView {
  text: string;
  tooltip: string;
  /** Show with the warning background. */
  warning: boolean;
}

interface ActiveProgress {
  title: string;
  message?: string;
  percentage?: number;
}

/**
 * How long a started server may take to report its first index before the item says
 * "ready" anyway (a server that reports no progress must not spin for ever).
 */
export const FIRST_INDEX_GRACE_MS = 10_000;

/** Plain state → text; the extension copies `view()` onto a `StatusBarItem`. */
export class StatusBarModel {
  private state: ServerState = "starting";
  private detail = "";
  private readonly progress = new Map<string | number, ActiveProgress>();
  private last: LastBundle | undefined;
  /**
   * Running, but the first index has not been reported yet. The server indexes right after
   * `initialized` and only then begins its progress: without this, the item said "ready"
   * for a moment before indexing (seen in a real VS Code).
   */
  private awaitingIndex = false;

  setState(state: ServerState, detail = ""): void {
    if (state === "running" && this.state !== "running") this.awaitingIndex = true;
    if (state !== "running") this.awaitingIndex = false;
    this.state = state;
    this.detail = detail;
    if (state !== "running") this.progress.clear();
  }

  /** The grace period after the start is over (see FIRST_INDEX_GRACE_MS). */
  firstIndexOverdue(): void {
    this.awaitingIndex = false;
  }

  /** Feed every `$/progress` work-done value here. */
  onProgress(token: string | number, value: WorkDoneProgressValue): void {
    if (value.kind === "begin") {
      this.progress.set(token, { title: value.title ?? "Working", message: value.message, percentage: value.percentage });
    } else if (value.kind === "report") {
      const current = this.progress.get(token) ?? { title: "Working" };
      this.progress.set(token, {
        title: current.title,
        message: value.message ?? current.message,
        percentage: value.percentage ?? current.percentage,
      });
    } else {
      this.progress.delete(token);
      this.awaitingIndex = false;
    }
  }

  onBundle(agent: string, result: Pick<BundleResult, "total_tokens" | "budget" | "sections">): void {
    this.awaitingIndex = false;
    this.last = { agent, totalTokens: result.total_tokens, budget: result.budget, sections: result.sections?.length ?? 0 };
  }

  get lastBundle(): LastBundle | undefined {
    return this.last;
  }

  get busy(): boolean {
    return this.progress.size > 0;
  }

  view(): StatusBarView {
    const click = "Click for ctx-lsp status.";
    if (this.state === "failed" || this.state === "stopped") {
      const why = this.detail ? `: ${this.detail}` : "";
      return { text: "$(error) ctx", tooltip: `ctx-lsp is not running${why}. ${click}`, warning: true };
    }
    if (this.state === "starting") {
      return { text: "$(loading~spin) ctx", tooltip: `ctx-lsp is starting${this.detail ? ` (${this.detail})` : ""}. ${click}`, warning: false };
    }
    const latest = [...this.progress.values()].pop();
    if (latest) {
      const pct = latest.percentage !== undefined ? ` ${Math.floor(latest.percentage)}%` : "";
      const message = latest.message ? `: ${latest.message}` : "";
      return { text: `$(sync~spin) ctx${pct}`, tooltip: `${latest.title}${message}. ${click}`, warning: false };
    }
    if (this.awaitingIndex) {
      return { text: "$(sync~spin) ctx", tooltip: `ctx-lsp is starting to index the workspace. ${click}`, warning: false };
    }
    if (this.last) {
      const { agent, totalTokens, budget, sections } = this.last;
      return {
        text: `$(layers) ctx ${formatBudgetUse(totalTokens, budget)}`,
        tooltip:
          `Last bundle (${agent}): ${formatCount(totalTokens)} of ${formatCount(budget)} tokens, ` +
          `${percentOf(totalTokens, budget)}% of its budget, ${sections} sections. ${click}`,
        warning: false,
      };
    }
    return { text: "$(layers) ctx", tooltip: `ctx-lsp is ready. ${click}`, warning: false };
  }
}

function counts(table: Record<string, number> | undefined): string {
  const entries = Object.entries(table ?? {});
  if (entries.length === 0) return "none";
  return entries
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, n]) => `${name} ${formatCount(n)}`)
    .join(", ");
}

function ms(value: unknown): string {
  return typeof value === "number" ? `${value} ms` : "–";
}

/** `ctx.status` as text for an output channel. Missing fields show as "?". */
export function renderStatus(status: StatusResult, command?: string): string {
  const lines: string[] = [];
  const state = status.indexing ? "indexing" : "ready";
  lines.push(`ctx-lsp ${status.version ?? "?"} — ${state}`);
  if (command) lines.push(`Server:          ${command}`);
  lines.push(`Folders:         ${(status.folders ?? []).join(", ") || "none"}`);
  lines.push(`Files indexed:   ${formatCount(status.files_indexed)} (${counts(status.files_by_language)})`);
  lines.push(`Symbols:         ${formatCount(status.symbols)}`);
  lines.push(
    `Tokens:          ${formatCount(status.tokens)} counted + ${formatCount(status.tokens_estimated)} estimated (${status.tokenizer ?? "?"})`,
  );
  lines.push(`Skipped:         ${counts(status.skipped)}; ignored directories ${formatCount(status.ignored_dirs)}`);
  if (status.too_large?.length) lines.push(`Too large:       ${status.too_large.join(", ")}`);
  lines.push(`Open documents:  ${formatCount(status.open_documents)}`);
  const watcher = status.watcher;
  if (watcher) {
    lines.push(`Watcher:         ${watcher.state ?? "?"} (${formatCount(watcher.events ?? 0)} events)${watcher.error ? ` — ${watcher.error}` : ""}`);
  }
  const last = status.last_index;
  if (last) {
    lines.push(`Last index:      ${last.seconds ?? "?"} s (${formatCount(last.parsed)} parsed, ${formatCount(last.reused)} from cache)`);
  }
  const docs = status.cache?.docs;
  if (docs) {
    const lookups = typeof docs.lookups === "number" ? docs.lookups : 0;
    const rate = typeof docs.hit_rate === "number" ? `${Math.round(docs.hit_rate * 100)}%` : "–";
    lines.push(
      `Docs cache:      ${formatCount(lookups)} lookups, hit rate ${rate}, hit p50 ${ms(docs.hit_p50_ms)}, miss p50 ${ms(docs.miss_p50_ms)}`,
    );
  } else {
    lines.push("Docs cache:      not used yet");
  }
  for (const warning of status.cache?.warnings ?? []) lines.push(`Cache warning:   ${warning}`);
  lines.push(`Config sources:  ${(status.config?.sources ?? []).join(" → ") || "?"}`);
  for (const warning of status.config?.warnings ?? []) lines.push(`Config warning:  ${warning}`);
  for (const problem of status.problems ?? []) lines.push(`Problem:         ${problem}`);
  const snap = status.last_snapshot;
  if (snap) {
    lines.push("");
    lines.push(
      `Last bundle:     ${formatCount(snap.total_used)} of ${formatCount(snap.available_budget)} tokens ` +
        `(${snap.utilization_pct ?? "?"}%), ${snap.context_window_type ?? "?"}, ${snap.tokenizer ?? "?"}`,
    );
    const rows = snap.contributions ?? [];
    if (rows.length) {
      const width = Math.max(...rows.map((r) => r.contributor.length), "contributor".length);
      lines.push(`  ${"contributor".padEnd(width)}  allocated      used  items  condensed`);
      for (const r of rows) {
        lines.push(
          `  ${r.contributor.padEnd(width)}  ${formatCount(r.allocated).padStart(9)}  ${formatCount(r.used).padStart(8)}  ` +
            `${String(r.items).padStart(5)}  ${String(r.condensed).padStart(9)}`,
        );
      }
    }
    for (const w of snap.warnings ?? []) lines.push(`  warning: ${w}`);
  }
  return lines.join("\n");
}
