// Drives a real VS Code (code-server) in headless Debian Chromium through what a user does
// with the ctx-lsp extension, and checks what the workbench shows. Started by run.sh, which
// installs code-server, playwright-core and the .vsix first.
//
//   node drive.js --code-server BIN --work DIR --python PY [--screenshots DIR]
//
// It writes the workspace and the settings into DIR, starts code-server in its own process
// group, runs the checks in order (each needs the ones before it) and stops at the first
// failure, saving DIR/out/failure.png. The last line is "e2e: N passed, M failed".
"use strict";
const { spawn, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const { chromium } = require("playwright-core");

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const WORK = path.resolve(args.work);
const OUT = path.join(WORK, "out");
const WS = path.join(WORK, "ws");
const USER_DATA = path.join(WORK, "ud");
const SHOTS = args.screenshots ? path.resolve(args.screenshots) : "";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

// ------------------------------------------------------------------ the workspace

const GENERATED_MODULES = 150; // enough files that indexing lasts long enough to be seen

const FILES = {
  "AGENTS.md": [
    "# Working on the shop",
    "",
    "Prices are integer cents, never floats (house rule: cents-not-floats).",
    "Run `python -m pytest` before committing.",
    "",
  ].join("\n"),
  "docs/discounts.md": [
    "# Discount codes",
    "",
    "## Codes",
    "",
    "SAVE10 takes 10 % off, HALF takes 50 % off. Codes are case-insensitive.",
    "",
    "## Rounding",
    "",
    "Discounts round down to whole cents.",
    "",
  ].join("\n"),
  "shop/__init__.py": '"""A small shop."""\n',
  "shop/cart.py": [
    '"""Shopping cart with discounts."""',
    "from dataclasses import dataclass, field",
    "",
    "from shop.pricing import apply_discount",
    "",
    "",
    "@dataclass",
    "class Item:",
    "    sku: str",
    "    price_cents: int",
    "    quantity: int = 1",
    "",
    "",
    "@dataclass",
    "class Cart:",
    "    items: list[Item] = field(default_factory=list)",
    "",
    "    def add(self, item: Item) -> None:",
    '        """Put an item in the cart."""',
    "        self.items.append(item)",
    "",
    "    def total_cents(self, code: str | None = None) -> int:",
    "        subtotal = sum(i.price_cents * i.quantity for i in self.items)",
    "        return apply_discount(subtotal, code)",
    "",
  ].join("\n"),
  "shop/pricing.py": [
    '"""Discount codes."""',
    'DISCOUNTS = {"SAVE10": 10, "HALF": 50}',
    "",
    "",
    "def apply_discount(subtotal_cents: int, code: str | None) -> int:",
    '    """The subtotal after the discount code, rounded down to whole cents."""',
    "    if not code:",
    "        return subtotal_cents",
    "    pct = DISCOUNTS.get(code.upper(), 0)",
    "    return subtotal_cents - subtotal_cents * pct // 100",
    "",
  ].join("\n"),
  "shop/inventory.py": [
    '"""Stock levels."""',
    "",
    "",
    "class Inventory:",
    "    def __init__(self) -> None:",
    "        self.stock: dict[str, int] = {}",
    "",
    "    def add(self, sku: str, count: int) -> None:",
    '        """Receive stock."""',
    "        self.stock[sku] = self.stock.get(sku, 0) + count  # restock-marker",
    "",
  ].join("\n"),
  "web/checkout.ts": [
    "// The checkout page's total, as the browser shows it.",
    "export interface Line { sku: string; priceCents: number; quantity: number }",
    "",
    "export function checkoutTotalCents(lines: Line[]): number {",
    "  return lines.reduce((sum, l) => sum + l.priceCents * l.quantity, 0);",
    "}",
    "",
  ].join("\n"),
};
for (let i = 0; i < GENERATED_MODULES; i++) {
  const n = String(i).padStart(3, "0");
  FILES[`gen/report_${n}.py`] = [
    `"""Generated report ${n}."""`,
    "",
    "",
    `def report_${n}(rows: list[dict]) -> str:`,
    `    """Render report ${n}."""`,
    `    return "\\n".join(f"{r['sku']}: {r['count']}" for r in rows)`,
    "",
    "",
    `class Report${n}:`,
    `    title = "report ${n}"`,
    "",
    "    def render(self, rows: list[dict]) -> str:",
    `        return report_${n}(rows)`,
    "",
  ].join("\n");
}

/**
 * The workspace, with ctx-lsp installed the way `pip install ctx-lsp` into the project's
 * `.venv` leaves it: a venv whose `bin/ctx-lsp` runs the server. The venv reaches the
 * already installed ctx-lsp through a .pth file instead of a second pip install.
 */
function makeWorkspace(python) {
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(WS, rel)), { recursive: true });
    fs.writeFileSync(path.join(WS, rel), text);
  }
  const venv = path.join(WS, ".venv");
  execFileSync(python, ["-m", "venv", "--without-pip", venv]);
  const sitePaths = (py) =>
    JSON.parse(execFileSync(py, ["-c", "import json, sysconfig as s; print(json.dumps(sorted({s.get_path('purelib'), s.get_path('platlib')})))"]).toString());
  const venvPython = path.join(venv, "bin", "python");
  const lines = sitePaths(python).map((dir) => `import site; site.addsitedir(${JSON.stringify(dir)})`);
  fs.writeFileSync(path.join(sitePaths(venvPython)[0], "ctx_lsp_e2e.pth"), lines.join("\n") + "\n");
  const script = path.join(venv, "bin", "ctx-lsp");
  fs.writeFileSync(script, `#!${venvPython}\nimport sys\nfrom ctx_lsp.cli import main\nsys.exit(main())\n`);
  fs.chmodSync(script, 0o755);
  execFileSync(script, ["--help"], { stdio: "ignore" });
}

function writeSettings() {
  fs.mkdirSync(path.join(USER_DATA, "User"), { recursive: true });
  fs.mkdirSync(path.join(USER_DATA, "Machine"), { recursive: true });
  writeUserSettings({});
  fs.writeFileSync(path.join(USER_DATA, "Machine", "settings.json"), "{}\n");
}

const QUIET = {
  "security.workspace.trust.enabled": false,
  "chat.disableAIFeatures": true,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "files.autoSave": "off",
  "editor.minimap.enabled": false,
  "window.commandCenter": false,
  "workbench.colorTheme": "Default Light Modern",
};

function writeUserSettings(extra) {
  fs.writeFileSync(path.join(USER_DATA, "User", "settings.json"), JSON.stringify({ ...QUIET, ...extra }, null, 2) + "\n");
}

function readUserSettings() {
  return JSON.parse(fs.readFileSync(path.join(USER_DATA, "User", "settings.json"), "utf8"));
}

// ------------------------------------------------------------------ code-server

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function startCodeServer(port) {
  const logFd = fs.openSync(path.join(WORK, "code-server.log"), "w");
  const child = spawn(
    args["code-server"],
    [
      "--config", path.join(WORK, "code-server.yaml"),
      "--user-data-dir", USER_DATA,
      "--extensions-dir", path.join(WORK, "exts"),
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      WS,
    ],
    { detached: true, stdio: ["ignore", logFd, logFd] },
  );
  const stop = async () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    for (let i = 0; i < 50; i++) {
      try {
        process.kill(-child.pid, 0);
      } catch {
        return;
      }
      await sleep(100);
    }
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone
    }
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error("code-server did not answer /healthz within 30 s: see code-server.log");
    }
    await sleep(200);
  }
  return stop;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ workbench helpers

/** Records every text the ctx-lsp status bar item shows, from the page's first moment. */
function recordStatusItem() {
  window.__ctxStatus = [];
  const read = () => {
    const el = document.querySelector('[id$="ctxLsp.status"]');
    if (!el) return;
    const icons = [...el.querySelectorAll(".codicon")]
      .map((c) => [...c.classList].find((k) => k.startsWith("codicon-") && !k.startsWith("codicon-modifier")))
      .filter(Boolean);
    const text = `${icons.map((i) => `$(${i.replace("codicon-", "")})`).join(" ")} ${el.innerText.trim()}`.trim();
    const seen = window.__ctxStatus;
    if (seen.length === 0 || seen[seen.length - 1].text !== text) seen.push({ t: Date.now(), text });
  };
  new MutationObserver(read).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

class Workbench {
  constructor(page) {
    this.page = page;
    this.statusItem = page.locator('[id$="ctxLsp.status"]');
    this.quickInput = page.locator(".quick-input-widget");
    this.quickInputBox = page.locator(".quick-input-widget .quick-input-box input");
  }

  async statusText() {
    const seen = await this.page.evaluate(() => window.__ctxStatus ?? []);
    return seen.length ? seen[seen.length - 1].text : "";
  }

  async statusHistory() {
    return (await this.page.evaluate(() => window.__ctxStatus ?? [])).map((s) => s.text);
  }

  async waitForStatus(pattern, timeout = 60_000, failOnError = true) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const text = await this.statusText();
      if (pattern.test(text)) return text;
      if (failOnError && text.startsWith("$(error)") && !pattern.test("$(error) ctx")) throw new Error(`the status item shows an error (${text}) while waiting for ${pattern}`);
      if (Date.now() > deadline) throw new Error(`the status item shows ${JSON.stringify(text)}, not ${pattern}`);
      await sleep(100);
    }
  }

  async closeQuickInput() {
    if (await this.quickInput.isVisible()) {
      await this.page.keyboard.press("Escape");
      await this.quickInput.waitFor({ state: "hidden", timeout: 5_000 });
    }
  }

  /** Run a command from the Command Palette by its full title. */
  async command(title) {
    await this.closeQuickInput();
    await this.page.keyboard.press("F1");
    await this.quickInputBox.waitFor({ timeout: 10_000 });
    await this.quickInputBox.fill(`>${title}`);
    const row = this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    await row.waitFor({ timeout: 10_000 });
    await row.click();
  }

  async quickPickTitle(text, timeout = 15_000) {
    await this.page.locator(".quick-input-widget .quick-input-title", { hasText: text }).waitFor({ timeout });
  }

  async quickPickRows() {
    const rows = this.page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
    await rows.first().waitFor({ timeout: 10_000 });
    return (await rows.allInnerTexts()).map((s) => s.replace(/\s+/g, " ").trim());
  }

  async openFile(name) {
    await this.closeQuickInput();
    // F1 opens the Command Palette from anywhere (Ctrl+P does not while the Settings editor's
    // search box has focus); without the leading ">" it is Quick Open.
    await this.page.keyboard.press("F1");
    await this.quickInputBox.waitFor({ timeout: 10_000 });
    await this.quickInputBox.fill(name);
    const row = this.page.locator(".quick-input-list .monaco-list-row", { hasText: path.basename(name) }).first();
    await row.waitFor({ timeout: 20_000 });
    await this.page.keyboard.press("Enter");
    await this.activeTab(path.basename(name));
    await this.page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
  }

  async activeTab(label, timeout = 20_000) {
    const tab = this.page.locator(".editor-group-container.active .tab.active", { hasText: label });
    await tab.waitFor({ timeout });
    return tab;
  }

  /** The whole text of the focused editor, copied through the clipboard as a user would. */
  async copyFocusedEditor() {
    await this.page.keyboard.press("Control+A");
    await this.page.keyboard.press("Control+C");
    await sleep(200);
    const text = await this.clipboard();
    await this.page.keyboard.press("Escape");
    return text;
  }

  /** The Settings editor (User tab, where it opens), searching for `query`. */
  async searchSettings(query) {
    await this.command("Preferences: Open Settings (UI)");
    await this.page.locator(".settings-editor .settings-header .suggest-input-container").waitFor({ timeout: 15_000 });
    await this.page.locator(".settings-editor .settings-header .suggest-input-container .monaco-editor.focused").waitFor({ timeout: 5_000 });
    await this.page.keyboard.press("Control+A");
    await this.page.keyboard.insertText(query);
  }

  async hidePanel() {
    const panel = this.page.locator(".part.panel");
    if (await panel.isVisible()) {
      await this.page.keyboard.press("Control+J");
      await panel.waitFor({ state: "hidden", timeout: 5_000 });
    }
  }

  async clipboard() {
    return this.page.evaluate(() => navigator.clipboard.readText());
  }

  async setClipboard(text) {
    await this.page.evaluate((t) => navigator.clipboard.writeText(t), text);
  }

  async languageMode() {
    return (await this.page.locator('[id="status.editor.mode"]').innerText()).trim();
  }

  notification(text) {
    return this.page.locator(".notifications-toasts .notification-toast", { hasText: text }).last();
  }

  async notificationText(text, timeout = 60_000) {
    const toast = this.notification(text);
    await toast.waitFor({ timeout });
    return (await toast.locator(".notification-list-item-message").innerText()).trim();
  }

  async clearNotifications() {
    await this.command("Notifications: Clear All Notifications");
    await this.page.locator(".notifications-toasts .notification-toast").first().waitFor({ state: "hidden", timeout: 5_000 }).catch(() => {});
  }

  /** The quick pick and input box of "Copy Context Bundle for Agent…"; returns the notification. */
  async copyBundle(agent, task, onPick) {
    await this.command("ctx-lsp: Copy Context Bundle for Agent…");
    await this.quickPickTitle("Copy Context Bundle for Agent");
    const agents = await this.quickPickRows();
    if (onPick) await onPick();
    await this.quickInputBox.fill(agent);
    await this.page.locator(".quick-input-list .monaco-list-row", { hasText: agent }).first().waitFor({ timeout: 5_000 });
    await this.page.keyboard.press("Enter");
    await this.quickPickTitle(`Context bundle for ${agent}`);
    await this.quickInputBox.fill(task);
    await this.page.keyboard.press("Enter");
    const message = await this.notificationText(`Copied the ${agent} bundle`);
    return { agents, message, bundle: await this.clipboard() };
  }

  async screenshot(name, options = {}) {
    const file = path.join(OUT, name);
    await this.page.screenshot({ path: file, ...options });
    if (SHOTS) {
      fs.mkdirSync(SHOTS, { recursive: true });
      fs.copyFileSync(file, path.join(SHOTS, name));
    }
    return file;
  }
}

/** A box around `locator`, grown by `margin` pixels and kept inside the page. */
async function around(page, locator, margin) {
  const box = await locator.boundingBox();
  const view = page.viewportSize();
  const x = Math.max(0, box.x - margin.left);
  const y = Math.max(0, box.y - margin.top);
  const right = Math.min(view.width, box.x + box.width + margin.right);
  const bottom = Math.min(view.height, box.y + box.height + margin.bottom);
  return { x, y, width: right - x, height: bottom - y };
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

// ------------------------------------------------------------------ the checks

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  makeWorkspace(args.python);
  writeSettings();
  const port = await freePort();
  const stopCodeServer = await startCodeServer(port);
  log(`code-server on port ${port}`);
  // Stopped from outside (a test runner's timeout): code-server runs in its own process
  // group, so take it down before going.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.once(signal, () => {
      log(`${signal}: stopping code-server`);
      void stopCodeServer().finally(() => process.exit(1));
    });
  }
  try {
    return await drive(port);
  } finally {
    await stopCodeServer();
    copyLogs();
  }
}

/** The checks, in a browser on the running code-server; returns the exit status. */
async function drive(port) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const origin = `http://127.0.0.1:${port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 780 }, deviceScaleFactor: 1 });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  await context.addInitScript(recordStatusItem);
  const page = await context.newPage();
  page.on("pageerror", (e) => log("page error:", e.message));
  const wb = new Workbench(page);

  const results = [];
  let failed = false;
  const check = async (name, fn) => {
    if (failed) return;
    log(`check: ${name}`);
    const started = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      log(`  ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (err) {
      failed = true;
      const message = String(err.message).split("\nCall log:")[0];
      results.push({ name, ok: false, error: message });
      log(`  FAILED: ${message}`);
      log(`  status item history: ${JSON.stringify(await wb.statusHistory().catch(() => []))}`);
      await page.screenshot({ path: path.join(OUT, "failure.png") }).catch(() => {});
    }
  };

  try {
    await check("the workbench opens the generated workspace", async () => {
      await page.goto(`${origin}/?folder=${encodeURIComponent(WS)}`, { waitUntil: "domcontentloaded" });
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      await page.locator(".explorer-folders-view, .explorer-viewlet").first().waitFor({ timeout: 60_000 });
    });

    await check("the server starts from the workspace's .venv, and the status item follows indexing to ready", async () => {
      await wb.statusItem.waitFor({ timeout: 60_000 });
      await wb.waitForStatus(/^\$\(layers\) ctx$/, 120_000);
      const history = await wb.statusHistory();
      log(`  status item: ${history.join(" → ")}`);
      expect(history.some((t) => t.includes("$(loading~spin)") || t.includes("$(loading)")), "the item never showed the server starting");
      const firstSync = history.findIndex((t) => /^\$\(sync[^)]*\) ctx/.test(t));
      expect(firstSync >= 0, "the item never showed indexing");
      expect(!history.slice(0, firstSync).some((t) => t.startsWith("$(layers)")), "the item said ready before the first index");
      expect(!history.some((t) => t.includes("$(error)")), "the item showed an error");
      await wb.command("ctx-lsp: Show Status");
      const output = page.locator(".part.panel .monaco-editor .view-lines").first();
      await output.waitFor({ timeout: 10_000 });
      await page.locator(".part.panel .monaco-editor .view-line", { hasText: "Files indexed" }).first().waitFor({ timeout: 10_000 });
      await page.locator(".part.panel .monaco-editor .view-line", { hasText: "Files indexed" }).first().click();
      const status = await wb.copyFocusedEditor();
      log(`  status:\n${status.split("\n").slice(0, 4).join("\n")}`);
      expect(status.includes(`Server:          ${path.join(WS, ".venv", "bin", "ctx-lsp")} serve`), `status names another server:\n${status}`);
      const indexed = /Files indexed:\s+(\d+)/.exec(status);
      expect(indexed && Number(indexed[1]) >= GENERATED_MODULES, `status shows too few files indexed:\n${status}`);
      await wb.hidePanel();
    });

    let first;
    await check("Copy Context Bundle for Agent…: the agent picked and the task typed put a bundle with the expected files on the clipboard", async () => {
      await wb.openFile("shop/cart.py");
      first = await wb.copyBundle("implementer", "apply a discount code to the cart total", async () => {
        await page.mouse.move(1100, 600); // no hover over the title in the picture
        await sleep(700);
        await wb.screenshot("vscode-quick-pick.png", { clip: await around(page, wb.quickInput, { left: 16, top: 40, right: 16, bottom: 16 }) });
      });
      log(`  agents offered: ${first.agents.map((a) => a.split(" ")[0]).join(", ")}`);
      log(`  notification: ${first.message}`);
      expect(first.agents.length >= 9, `only ${first.agents.length} agents offered`);
      expect(/^Copied the implementer bundle: [\d.]+K? of 6K tokens \(\d+%\)/.test(first.message), `unexpected notification: ${first.message}`);
      for (const needle of ["shop/pricing.py", "def apply_discount", "shop/cart.py", "cents-not-floats"]) {
        expect(first.bundle.includes(needle), `the bundle on the clipboard lacks ${needle}:\n${first.bundle.slice(0, 3000)}`);
      }
      fs.writeFileSync(path.join(OUT, "bundle-1.md"), first.bundle);
      const text = await wb.waitForStatus(/^\$\(layers\) ctx [\d.]+K?\/6K \(\d+%\)$/, 10_000);
      log(`  status item: ${text}`);
      await wb.clearNotifications();
      await wb.statusItem.hover();
      await page.locator(".monaco-hover, .workbench-hover", { hasText: "Last bundle (implementer)" }).first().waitFor({ timeout: 10_000 });
      await sleep(300);
      const view = page.viewportSize();
      await wb.screenshot("vscode-status-item.png", { clip: { x: view.width - 640, y: view.height - 110, width: 640, height: 110 } });
      await page.mouse.move(640, 300);
    });

    await check("an unsaved edit in an open editor reaches the next bundle", async () => {
      await wb.openFile("shop/cart.py");
      await page.keyboard.press("Control+End");
      // One line at column 0: typed newlines would be re-indented by the editor.
      await page.keyboard.insertText("def loyalty_bonus_cents(points: int) -> int: return points * 5  # typed, not saved");
      await page.locator(".editor-group-container.active .tab.active.dirty").waitFor({ timeout: 5_000 });
      const second = await wb.copyBundle("implementer", "loyalty bonus cents for the cart");
      fs.writeFileSync(path.join(OUT, "bundle-2.md"), second.bundle);
      expect(second.bundle.includes("def loyalty_bonus_cents"), `the unsaved method is not in the bundle:\n${second.bundle.slice(0, 3000)}`);
      expect(!fs.readFileSync(path.join(WS, "shop/cart.py"), "utf8").includes("loyalty"), "the edit was saved to disk");
      await wb.clearNotifications();
    });

    await check("Show Symbol… on an ambiguous name offers the matches and opens the chosen body", async () => {
      await wb.command("ctx-lsp: Show Symbol…");
      await wb.quickPickTitle("Show Symbol");
      await wb.quickInputBox.fill("add");
      await page.keyboard.press("Enter");
      await wb.quickPickTitle("add:");
      const rows = await wb.quickPickRows();
      log(`  matches offered: ${JSON.stringify(rows)}`);
      expect(rows.some((r) => r.startsWith("Cart.add")) && rows.some((r) => r.startsWith("Inventory.add")), `matches: ${JSON.stringify(rows)}`);
      await wb.quickInputBox.fill("Inventory");
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "Inventory.add" }).first().waitFor({ timeout: 5_000 });
      await page.keyboard.press("Enter");
      await page.locator(".editor-group-container.active .monaco-editor .view-line", { hasText: "# Inventory.add" }).first().waitFor({ timeout: 15_000 });
      const doc = await wb.copyFocusedEditor();
      expect(doc.includes("restock-marker") && doc.includes("shop/inventory.py"), `the document does not hold Inventory.add's body:\n${doc}`);
      expect(!doc.includes("self.items.append"), `the document holds Cart.add as well:\n${doc}`);
      expect((await wb.languageMode()) === "Markdown", `the symbol opened as ${await wb.languageMode()}`);
    });

    await check("Explain Last Bundle opens a Markdown document", async () => {
      await wb.command("ctx-lsp: Explain Last Bundle");
      await page.locator(".editor-group-container.active .monaco-editor .view-line", { hasText: "Why the last bundle holds what it holds" }).first().waitFor({ timeout: 15_000 });
      expect((await wb.languageMode()) === "Markdown", `the explanation opened as ${await wb.languageMode()}`);
      await page.mouse.move(640, 300);
      await sleep(300);
      await wb.screenshot("vscode-explain.png");
      const doc = await wb.copyFocusedEditor();
      expect(doc.includes("Agent: **implementer**") && doc.includes("## In the bundle") && doc.includes("shop/cart.py"), `explanation:\n${doc.slice(0, 2000)}`);
    });

    await check("changing ctxLsp.defaultContextWindowType in the Settings editor reaches the running server", async () => {
      await wb.searchSettings("ctxLsp.defaultContextWindowType");
      const input = page.locator(".settings-editor .setting-item-contents", { hasText: "Default Context Window Type" }).locator("input").first();
      await input.waitFor({ timeout: 15_000 });
      await input.fill("token-efficient");
      const deadline = Date.now() + 10_000;
      while (readUserSettings()["ctxLsp.defaultContextWindowType"] !== "token-efficient") {
        expect(Date.now() < deadline, "the Settings editor did not write ctxLsp.defaultContextWindowType to User settings");
        await sleep(200);
      }
      await sleep(1000); // the extension sends workspace/didChangeConfiguration
      // A TypeScript buffer is synced like any file, and the server reads TypeScript: a task
      // naming its function gets the function's signature, as an outline (the window type is
      // token-efficient by now, which shows outlines). cart.py is the other open document.
      await wb.openFile("web/checkout.ts");
      await wb.openFile("shop/cart.py");
      const third = await wb.copyBundle("implementer", "checkout total cents in the browser");
      fs.writeFileSync(path.join(OUT, "bundle-3.md"), third.bundle);
      expect(
        third.bundle.includes("web/checkout.ts") && third.bundle.includes("export function checkoutTotalCents(lines: Line[]): number"),
        `the TypeScript function is not in the bundle:\n${third.bundle.slice(0, 3000)}`,
      );
      await wb.clearNotifications();
      await wb.command("ctx-lsp: Show Status");
      await page.locator(".part.panel .monaco-editor .view-line", { hasText: "Last bundle" }).first().waitFor({ timeout: 10_000 });
      await page.locator(".part.panel .monaco-editor .view-line", { hasText: "Last bundle" }).first().click();
      const status = await wb.copyFocusedEditor();
      const last = /Last bundle:.*/.exec(status)?.[0] ?? "";
      log(`  ${last}`);
      expect(last.includes("token-efficient"), `the server did not use the new default context window type:\n${status}`);
      expect(/Config sources:.*client/.test(status), `the server reports no client configuration:\n${status}`);
      expect(/Open documents:\s+2$/m.test(status), `the server does not have cart.py and checkout.ts open:\n${status}`);
      await wb.hidePanel();
    });

    await check("a wrong ctxLsp.serverCommand in User settings shows an error the user can act on", async () => {
      const wrong = path.join(WORK, "nowhere", "bin", "ctx-lsp");
      await wb.searchSettings("ctxLsp.serverCommand");
      const item = page.locator(".settings-editor .setting-item-contents", { hasText: "Server Command" }).first();
      await item.waitFor({ timeout: 15_000 });
      // One item: the program alone is a whole command line (ctx-lsp without "serve" would not
      // run either, but the program is what is missing).
      await item.locator(".monaco-button", { hasText: "Add Item" }).click();
      await item.locator(".setting-list-edit-row input").first().fill(wrong);
      await page.keyboard.press("Enter");
      const deadline = Date.now() + 10_000;
      while (JSON.stringify(readUserSettings()["ctxLsp.serverCommand"]) !== JSON.stringify([wrong])) {
        expect(Date.now() < deadline, `the Settings editor wrote ${JSON.stringify(readUserSettings()["ctxLsp.serverCommand"])}`);
        await sleep(200);
      }
      const message = await wb.notificationText(wrong, 30_000);
      log(`  error: ${message}`);
      expect(message.includes("ctxLsp.serverCommand"), `the error does not name the setting: ${message}`);
      const toast = wb.notification(wrong);
      expect(await toast.locator(".monaco-button", { hasText: "Open Settings" }).isVisible(), "the error offers no Open Settings");
      await wb.waitForStatus(/^\$\(error\) ctx$/, 10_000);
      // Removing the item brings the server back, found in the workspace's .venv again.
      const row = item.locator(".setting-list-row").first();
      await row.hover();
      await row.locator('.action-label[aria-label="Remove Item"], .action-label.codicon-close').first().click();
      await wb.waitForStatus(/^\$\(layers\) ctx( |$)/, 60_000, false);
      log(`  status item: ${(await wb.statusHistory()).slice(-3).join(" → ")}`);
    });
  } finally {
    await browser.close().catch(() => {});
  }
  const passed = results.filter((r) => r.ok).length;
  console.log(`e2e: ${passed} passed, ${results.length - passed} failed${failed ? ` (stopped at: ${results[results.length - 1].name})` : ""}`);
  return failed ? 1 : 0;
}

/** The extension's log (its output channel) next to the other logs, for a failed run. */
function copyLogs() {
  const logs = path.join(USER_DATA, "logs");
  if (!fs.existsSync(logs)) return;
  for (const file of fs.readdirSync(logs, { recursive: true })) {
    if (String(file).endsWith(path.join("ctx-lsp.ctx-lsp", "ctx-lsp.log"))) {
      fs.copyFileSync(path.join(logs, file), path.join(OUT, "ctx-lsp-output.log"));
    }
  }
}

main().then((status) => process.exit(status), (err) => {
  console.error(`e2e: error: ${err.stack || err.message}`);
  console.log("e2e: 0 passed, 1 failed");
  process.exit(1);
});
