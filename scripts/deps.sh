#!/usr/bin/env bash
# Installs what Giulia needs on a Debian 12 machine, and only what is missing.
#
#   scripts/deps.sh [build|test|demo|bench|lint|fuzz]...
#
# Idempotent: a second run with everything present makes no network call.
# Every dependency comes from Debian's packages, except the Elixir grammar,
# which comes from the npm registry at a pinned version and integrity hash and
# is unpacked under build/ (never committed).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

build_pkgs="build-essential pkg-config erlang-base erlang-dev elixir libtree-sitter-dev
  libsqlite3-dev libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev zlib1g-dev npm"
test_pkgs="erlang-tools erlang-p1-sqlite3 erlang-syntax-tools erlang-inets sqlite3 curl wrk chromium
  libclang-rt-14-dev clang"
demo_pkgs="erlang-inets erlang-p1-sqlite3 erlang-p1-pgsql wrk curl"
bench_pkgs="wrk hyperfine time erlang-p1-sqlite3"
lint_pkgs="clang-format cppcheck"
fuzz_pkgs="clang libclang-rt-14-dev"

GRAMMAR_VERSION=0.3.5
GRAMMAR_INTEGRITY="sha512-xozQMvYK0aSolcQZAx2d84Xe/YMWFuRPYFlLVxO01bM2GITh5jyiIp0TqPCQa8754UzRAI7A83hZmfiYub5TZQ=="
GRAMMAR_DIR="$here/build/tree-sitter-elixir"

want=""
for goal in "${@:-build}"; do
  case "$goal" in
    build) want="$want $build_pkgs" ;;
    test) want="$want $build_pkgs $test_pkgs" ;;
    demo) want="$want $build_pkgs $demo_pkgs" ;;
    bench) want="$want $build_pkgs $bench_pkgs" ;;
    lint) want="$want $lint_pkgs" ;;
    fuzz) want="$want $build_pkgs $fuzz_pkgs" ;;
    *) echo "deps.sh: unknown goal '$goal' (build, test, demo, bench, lint, fuzz)" >&2; exit 2 ;;
  esac
done

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # node and npm may come from outside Debian's packages on some images.
    if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
    case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
  fi
done

if [ -n "$missing" ]; then
  echo "deps.sh: installing:$missing" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The Elixir grammar, pinned and checked, unpacked once.
if [ ! -f "$GRAMMAR_DIR/.ok-$GRAMMAR_VERSION" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "tree-sitter-elixir@$GRAMMAR_VERSION" >/dev/null)
  tgz="$tmp/tree-sitter-elixir-$GRAMMAR_VERSION.tgz"
  got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
  if [ "$got" != "$GRAMMAR_INTEGRITY" ]; then
    echo "deps.sh: tree-sitter-elixir@$GRAMMAR_VERSION integrity mismatch: got $got" >&2
    exit 1
  fi
  rm -rf "$GRAMMAR_DIR"
  mkdir -p "$GRAMMAR_DIR"
  tar -xzf "$tgz" -C "$GRAMMAR_DIR" --strip-components=1 package/src package/queries package/LICENSE package/package.json
  touch "$GRAMMAR_DIR/.ok-$GRAMMAR_VERSION"
fi

# The official MCP SDK (client side) for the MCP tests: pinned by
# tests/mcp/package-lock.json (every package with its integrity hash, checked
# by `npm ci`), the SDK's own hash checked here too; under build/ only.
MCP_SDK_VERSION=1.32.2
MCP_SDK_INTEGRITY="sha512-SWsVtH/0vULSQStoZ6xxH2K09Li8fXYTMC64ZeogCdpZ3XSi1eCPOByV1OpuJxuI3OcmHhosDWYyii07tpPsLw=="
MCP_SDK_DIR="$here/build/mcp-client"
case " $* " in *" test "*)
  if [ ! -f "$MCP_SDK_DIR/.ok-$MCP_SDK_VERSION" ]; then
    locked=$(node -e 'const l=require(process.argv[1]);const p=l.packages["node_modules/@modelcontextprotocol/sdk"];process.stdout.write(p.version+" "+p.integrity)' "$here/tests/mcp/package-lock.json")
    if [ "$locked" != "$MCP_SDK_VERSION $MCP_SDK_INTEGRITY" ]; then
      echo "deps.sh: tests/mcp/package-lock.json does not pin @modelcontextprotocol/sdk@$MCP_SDK_VERSION with the expected integrity" >&2
      exit 1
    fi
    rm -rf "$MCP_SDK_DIR"
    mkdir -p "$MCP_SDK_DIR"
    cp "$here/tests/mcp/package.json" "$here/tests/mcp/package-lock.json" "$MCP_SDK_DIR/"
    (cd "$MCP_SDK_DIR" && npm ci --silent --ignore-scripts --no-audit --no-fund >/dev/null)
    touch "$MCP_SDK_DIR/.ok-$MCP_SDK_VERSION"
  fi
  ;;
esac
