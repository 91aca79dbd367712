/**
 * The server's wire contract as the extension uses it: method and command names, and the
 * shapes of the results it reads (DESIGN.md §Protocol; field names are snake_case).
 *
 * Result types mark most fields optional: the extension renders whatever the server sends
 * and must not break when a newer server adds or drops a field.
 */

/** Custom requests. */
export const METHODS = {
  bundle: "ctx/bundle",
  symbol: "ctx/symbol",
} as const;

/** `workspace/executeCommand` commands the server registers (not VS Code command ids). */
export const SERVER_COMMANDS = {
  status: "ctx.status",
  reindex: "ctx.reindex",
  explain: "ctx.explain",
  prewarmDocs: "ctx.prewarmDocs",
} as const;

/** JSON-RPC / LSP error codes the extension tells apart. */
export const ERROR_CODES = {
  methodNotFound: -32601,
  invalidParams: -32602,
  requestFailed: -32803,
} as const;

export interface Position {
  line: number;
  character: number;
}

export interface BundleParams {
  query?: string;
  agent: string;
  budget?: number;
  profile?: string;
  focus?: { uri: string; position: Position };
  open?: string[];
  format?: "markdown" | "xml";
}

export interface LineRange {
  start_line: number;
  end_line: number;
}

export interface Section {
  id: string;
  contributor: string;
  path: string;
  uri?: string;
  tier: number;
  range?: LineRange;
  tokens: number;
  salience?: number;
  reason?: string;
  content?: string;
}

export interface Contribution {
  contributor: string;
  allocated: number;
  used: number;
  items: number;
  condensed: number;
}

export interface Snapshot {
  context_window_type?: string;
  model_context_limit?: number | null;
  output_reserve?: number;
  available_budget?: number;
  total_used?: number;
  utilization_pct?: number;
  tokenizer?: string;
  contributions?: Contribution[];
  condensations?: string[];
  dynamic_adjustments_fired?: string[];
  reallocation_events?: string[];
  skipped_contributors?: string[];
  warnings?: string[];
}

export interface BundleResult {
  sections: Section[];
  text: string;
  total_tokens: number;
  budget: number;
  snapshot?: Snapshot;
  messages?: unknown[];
}

/** `ctx.status`. */
export interface StatusResult {
  version?: string;
  folders?: string[];
  indexing?: boolean;
  files_indexed?: number;
  files_by_language?: Record<string, number>;
  skipped?: Record<string, number>;
  too_large?: string[];
  ignored_dirs?: number;
  problems?: string[];
  symbols?: number;
  tokens?: number;
  tokens_estimated?: number;
  tokenizer?: string;
  open_documents?: number;
  watcher?: { state?: string; error?: string | null; events?: number };
  cache?: {
    locations?: unknown;
    warnings?: string[];
    docs?: Record<string, unknown> | null;
  };
  config?: { sources?: string[]; warnings?: string[] };
  last_index?: { seconds?: number; parsed?: number; reused?: number };
  last_snapshot?: Snapshot | null;
}

/** One row of `ctx.explain`. */
export interface Decision {
  id: string;
  contributor: string;
  path: string;
  salience: number;
  rank: number;
  reason: string;
  outcome: string;
  included: boolean;
  tier?: number | null;
  tokens?: number;
}

/** `ctx.explain`: the last bundle's candidates. */
export interface Explanation {
  query: string;
  agent: string;
  budget: number;
  total_tokens: number;
  elapsed_ms?: number;
  candidates: Decision[];
}

/** `ctx.prewarmDocs`. */
export interface PrewarmResult {
  declared?: string[];
  warmed?: number;
  cache?: Record<string, unknown>;
}

export interface SymbolParams {
  name: string;
  path?: string;
  include_body?: boolean;
  max_tokens?: number;
}

export interface SymbolMatch {
  path: string;
  uri?: string;
  qualname: string;
  kind: string;
  range: LineRange;
  signature?: string;
  body?: string;
  tokens?: number;
  truncated?: boolean;
}

/** `ctx/symbol`. */
export interface SymbolResult {
  name?: string;
  matches: SymbolMatch[];
  ambiguous?: boolean;
  total_matches?: number;
  note?: string;
}

/** `$/progress` work-done values. */
export interface WorkDoneProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}
