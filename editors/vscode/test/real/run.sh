#!/usr/bin/env bash
# The ctx-lsp extension inside a real VS Code: code-server (VS Code 1.100.3's workbench and
# extension host) in headless Debian Chromium, driven by playwright-core (drive.js).
#
#   editors/vscode/test/real/run.sh [--vsix FILE] [--python PY] [--workdir DIR] [--screenshots DIR]
#
# --vsix         the packaged extension (default: build it with npm ci + npm run package)
# --python       a Python that can import ctx_lsp (default: $CTX_LSP_PYTHON, else python3 or
#                python on PATH that has it, else the repository installed into a venv here)
# --workdir      the test's own folder: code-server's user data, extensions, temp files, the
#                generated workspace, logs (default: a new folder under $TMPDIR, removed on
#                success unless --keep)
# --screenshots  also save the screenshots docs/vscode.md shows into DIR
#
# Installs, cached across runs under $CTX_LSP_E2E_CACHE (default ~/.cache/ctx-lsp-e2e):
# npm code-server@4.100.3 and playwright-core; Debian's chromium, ripgrep and libkrb5-dev come
# from apt when missing (as root). Exit status: 0 passed, 1 failed, 77 skipped (the last
# line says why: another OS, no Node 20, nothing installable).
set -euo pipefail

CODE_SERVER_VERSION=4.100.3   # the last code-server whose engines.node accepts Node 20
PLAYWRIGHT_VERSION=1.65.1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
EXT_DIR=$(cd "$HERE/../.." && pwd)
REPO=$(cd "$EXT_DIR/../.." && pwd)
CACHE=${CTX_LSP_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctx-lsp-e2e}

VSIX="" PY=${CTX_LSP_PYTHON:-} W="" SHOTS="" KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --vsix) VSIX=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --workdir) W=$2; shift 2 ;;
    --screenshots) SHOTS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: $0 [--vsix FILE] [--python PY] [--workdir DIR] [--screenshots DIR] [--keep]" >&2; exit 2 ;;
  esac
done

skip() { echo "e2e: skipped: $*"; exit 77; }
say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
timed() {
  local name=$1 start=$SECONDS status=0; shift
  "$@" || status=$?
  say "$name took $((SECONDS - start)) s"
  return $status
}

# ------------------------------------------------------------------ what this machine has
[ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] ||
  skip "needs Linux x86_64 (code-server from npm and Debian's chromium); this is $(uname -s) $(uname -m)"
command -v node >/dev/null && command -v npm >/dev/null || skip "needs node and npm on PATH"
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
[ "$NODE_MAJOR" -ge 20 ] || skip "needs Node >= 20 (found $(node --version))"
# code-server 4.100.3 declares engines.node 20; a newer Node would need a newer code-server.
[ "$NODE_MAJOR" -eq 20 ] || skip "code-server $CODE_SERVER_VERSION runs on Node 20 only (found $(node --version))"

if [ -z "$W" ]; then W=$(mktemp -d "${TMPDIR:-/tmp}/ctx-lsp-e2e.XXXXXX"); else mkdir -p "$W"; fi
W=$(cd "$W" && pwd)
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"   # two runs at once share the cache: installs happen one at a time
say "test folder $W; cache $CACHE"

# ------------------------------------------------------------------ installs (cached)
apt_packages() {
  local missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  command -v rg >/dev/null || missing+=(ripgrep)
  [ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)   # code-server's kerberos module builds from source
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || skip "needs ${missing[*]} and this machine has no apt-get"
  [ "$(id -u)" = 0 ] || skip "needs ${missing[*]}: install them (apt-get install ${missing[*]}), or run as root"
  say "apt-get install ${missing[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >"$W/apt.log" 2>&1 ||
    skip "apt-get install ${missing[*]} failed (no network?): see $W/apt.log"
}

CS_HOME="$CACHE/code-server-$CODE_SERVER_VERSION"
CODE_SERVER="$CS_HOME/node_modules/.bin/code-server"
code_server() {
  [ -f "$CS_HOME/.complete" ] && return 0
  rm -rf "$CS_HOME"; mkdir -p "$CS_HOME/tmp"
  # @vscode/ripgrep's postinstall downloads rg from a host the registries-only network cannot
  # reach; it first looks for the archive in $TMPDIR/vscode-ripgrep-cache-<its version>/, so
  # that is seeded with Debian's rg (the workbench's Quick Open and search run it).
  local rg_cache="$CS_HOME/tmp/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rg_cache"
  tar czf "$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  # npm_config_yes: node-pty's postinstall runs `npx node-gyp`, which a `yes=false` npmrc refuses.
  (cd "$CS_HOME" && echo '{"private":true}' >package.json &&
    TMPDIR="$CS_HOME/tmp" npm_config_yes=true npm install --no-audit --no-fund --no-save --unsafe-perm \
      "code-server@$CODE_SERVER_VERSION" >"$CS_HOME/install.log" 2>&1) ||
    skip "npm install code-server@$CODE_SERVER_VERSION failed (no registry?): see $CS_HOME/install.log"
  "$CODE_SERVER" --version >/dev/null || skip "code-server $CODE_SERVER_VERSION was installed but does not run: see $CS_HOME/install.log"
  rm -rf "$CS_HOME/tmp"; touch "$CS_HOME/.complete"
}

DRIVER_HOME="$CACHE/playwright-core-$PLAYWRIGHT_VERSION"
driver() {
  [ -f "$DRIVER_HOME/.complete" ] && return 0
  rm -rf "$DRIVER_HOME"; mkdir -p "$DRIVER_HOME"
  # playwright-core downloads no browser (Debian's chromium is used through executablePath).
  (cd "$DRIVER_HOME" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --no-save "playwright-core@$PLAYWRIGHT_VERSION" >"$DRIVER_HOME/install.log" 2>&1) ||
    skip "npm install playwright-core@$PLAYWRIGHT_VERSION failed (no registry?): see $DRIVER_HOME/install.log"
  touch "$DRIVER_HOME/.complete"
}

flock 9
timed "apt packages" apt_packages
timed "code-server $CODE_SERVER_VERSION" code_server
timed "playwright-core $PLAYWRIGHT_VERSION" driver
flock -u 9

# ------------------------------------------------------------------ the extension and the server
build_vsix() {
  [ -n "$VSIX" ] && return 0
  rm -rf "$W/ext"; mkdir -p "$W/ext"
  (cd "$EXT_DIR" && tar cf - --exclude=node_modules --exclude=out --exclude=out-test --exclude=out-tsc --exclude='*.vsix' .) |
    (cd "$W/ext" && tar xf -)
  (cd "$W/ext" && npm ci --prefer-offline --no-audit --no-fund >"$W/npm-ci.log" 2>&1 &&
    npm run package >"$W/package.log" 2>&1) || { echo "building the .vsix failed: see $W/npm-ci.log, $W/package.log"; exit 1; }
  VSIX="$W/ext/ctx-lsp.vsix"
}

has_ctx_lsp() { "$1" -c 'import ctx_lsp' >/dev/null 2>&1; }
find_python() {
  if [ -n "$PY" ]; then
    has_ctx_lsp "$PY" || { echo "--python $PY cannot import ctx_lsp"; exit 1; }
  else
    local candidate
    for candidate in python3 python; do
      if command -v "$candidate" >/dev/null && has_ctx_lsp "$candidate"; then PY=$(command -v "$candidate"); break; fi
    done
  fi
  if [ -z "$PY" ]; then
    say "no Python on PATH has ctx-lsp: installing $REPO into $W/venv"
    python3 -m venv "$W/venv" && "$W/venv/bin/pip" install -q "$REPO" >"$W/pip.log" 2>&1 ||
      { echo "pip install $REPO failed: see $W/pip.log"; exit 1; }
    PY="$W/venv/bin/python"
  fi
  PY=$("$PY" -c 'import sys; print(sys.executable)')
}

timed "the .vsix" build_vsix
timed "a Python with ctx-lsp" find_python
say "extension $VSIX; server from $PY"

# ------------------------------------------------------------------ the run
# Everything code-server writes stays in $W: user data, extensions, its temp files and sockets
# (TMPDIR), and its heartbeat and logs (XDG_DATA_HOME, even with --user-data-dir).
# TMPDIR is reached through a short symlink: Chromium's and code-server's Unix sockets live
# there, and a socket path over ~107 bytes fails (pytest's tmp_path alone is ~70).
rm -rf "$W/ud" "$W/exts" "$W/ws" "$W/out" "$W/tmp"
mkdir -p "$W/tmp" "$W/xdg-data" "$W/xdg-config" "$W/ud" "$W/exts" "$W/out"
SHORT_TMP=$(mktemp -u "${TMPDIR:-/tmp}/ctx-e2e.XXXXXX")
[ ${#SHORT_TMP} -lt 40 ] || SHORT_TMP=$(mktemp -u /tmp/ctx-e2e.XXXXXX)
ln -s "$W/tmp" "$SHORT_TMP"
trap 'rm -f "$SHORT_TMP"' EXIT
export TMPDIR="$SHORT_TMP" XDG_DATA_HOME="$W/xdg-data" XDG_CONFIG_HOME="$W/xdg-config"
CS=("$CODE_SERVER" --config "$W/code-server.yaml" --user-data-dir "$W/ud" --extensions-dir "$W/exts")
: >"$W/code-server.yaml"
install_vsix() { "${CS[@]}" --install-extension "$VSIX" >"$W/install-extension.log" 2>&1 || { cat "$W/install-extension.log"; exit 1; }; }
timed "install the .vsix" install_vsix

rc=0
NODE_PATH="$DRIVER_HOME/node_modules" timed "the test" node "$HERE/drive.js" \
  --code-server "$CODE_SERVER" --work "$W" --python "$PY" --screenshots "${SHOTS:-}" || rc=$?
if [ $rc -eq 0 ] && [ $KEEP = 0 ]; then
  timed "removing the test folder" rm -rf "$W"
else
  echo "e2e: logs, screenshots and the workspace are in $W"
fi
exit $rc
