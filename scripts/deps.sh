#!/usr/bin/env bash
# Installs what Giulia needs on a Debian 12 machine, and only what is missing;
# checks that every goal installs what its own targets declare they need.
#
#   scripts/deps.sh [GOAL...]          install what the goals need (default: build)
#   scripts/deps.sh --list GOAL...     print the goals' packages, one a line
#   scripts/deps.sh --extra GOAL...    print the packages these goals add to those of
#                                      build and lint: what .ci/run removes first
#   scripts/deps.sh --check [GOAL...]  check the declarations (default: every goal)
#
# Goals: build, test, demo, bench, lint, fuzz. test, demo, bench and fuzz build
# the binaries first, so they include build's packages.
#
# One table below says which goals need each package; each goal's list is
# derived from it. The targets of a goal declare what they need in a `needs:`
# line near their top (in their first 40 lines):
#
#   /* needs: erlang-p1-sqlite3 wrk scripts/nexus.sh */     (C)
#   # needs: curl wrk                                       (shell, Elixir)
#
# Each word is a Debian package or a path (it has a '/') relative to the
# repository's root, meaning "what that file declares" (e2e/demo.c runs
# scripts/nexus.sh, so it needs what nexus.sh needs). An empty list says the
# target needs nothing beyond build's packages. Which files belong to which
# goal is the goal_files table below; test suites, fuzz targets and bench
# scripts must each have a `needs:` line. `--check` fails, naming the package
# and the file, when a file declares a package its goal does not install, a
# package the table does not know, no `needs:` line where one is required,
# or a TH_NEED(..., "package", ...) check in a C file whose `needs:` line
# (with what it reaches through paths) does not declare that package.
# `make lint` runs it for every goal.
#
# Idempotent: a second run with everything present makes no network call.
# Every dependency comes from Debian's packages (one, Elixir's own source,
# from Debian's source archive: the SOURCES table), except the Elixir grammar,
# which comes from the npm registry at a pinned version and integrity hash and
# is unpacked under build/ (never committed), and the tests' npm clients (the
# MCP SDK, puppeteer-core), pinned by lock files and installed under build/.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

# package               goals               what for
PACKAGES="
build-essential         build               the C compiler and make
pkg-config              build               the libraries' flags
erlang-base             build,lint          erl, erlc, erl_call, escript: every BEAM node of the tests and the demo; the probes' lint
erlang-dev              build               ei.h and libei.a (the C node)
elixir                  build               elixirc: the tests' targets, the demo's Nexus, the grammar's oracle
libsqlite3-dev          build               the knowledge-graph and observation stores
libmicrohttpd-dev       build               the daemons' HTTP
libjansson-dev          build               JSON
libcurl4-openssl-dev    build               the CLI's and the daemons' HTTP client
zlib1g-dev              build               compressed BEAM chunks
npm                     build               fetches the pinned tree-sitter runtime and tree-sitter-elixir grammar
erlang-tools            test                xref, the object-code oracle's call graph
erlang-inets            test,demo,bench     httpd, Nexus's HTTP server
erlang-mnesia           test                Mnesia, the fleet target's store
erlang-runtime-tools    test                dbg: another tool's tracing in the etiquette tests
erlang-p1-sqlite3       test,demo,bench     :sqlite3, the store of Nexus and of the catalog target
erlang-p1-pgsql         test,demo,bench     :pgsql, Nexus's PostgreSQL repo (compiled with --warnings-as-errors)
curl                    test,demo,bench     scripts/nexus.sh health checks, the demo's and benches' requests
wrk                     test,demo,bench     HTTP load on the demo target and the daemons
yaws                    test                a real Erlang web server nobody here wrote (e2e_servers, issue 29)
jq                      test,demo,bench     the demo's replay summary (SCENARIO=all) and its e2e test; bench_checks.sh
zsh                     test                the zsh completion, parsed and loaded by zsh in the CLI help tests
chromium                test,bench          renders the HTML report headless; the dashboard's browser tests and bench
prometheus              test,bench          promtool check metrics and a real Prometheus scraping /metrics
python3                 bench               bench_api.sh's free ports and snapshot bodies
valgrind                bench               callgrind: instruction counts of bench_static.sh (BENCH_INSTRUCTIONS=1) and bench_fleet_cpu.sh (CALLGRIND=1)
clang                   fuzz                libFuzzer
libclang-rt-14-dev      fuzz                libFuzzer's runtime and the fuzz targets' sanitizers
clang-format            lint                formatting
cppcheck                lint                static analysis
git                     test,lint           the list of files to lint; the repositories of the review tests

libpq-dev               build               libpq: the PostgreSQL backend of the observation store
postgresql              test,bench          initdb, pg_ctl: the PostgreSQL suites' and bench's own server
xz-utils                test,bench          unpacks the pinned Debian source below
"

# Pinned sources from Debian's archive (not installed packages: fetched from
# the pool of the machine's apt mirror, size and sha256 checked before
# unpacking, unpacked under build/, never committed). A `needs:` line names
# one as src:NAME.
# name              goals       file in pool/main/<d>/<name>/   bytes    sha256                                                            under build/   what for
SOURCES="
src:elixir-lang     test,bench  elixir-lang_1.14.0.dfsg.orig.tar.xz 1527924 3dfa724f36b90d1bc41b9626a8ea0c293255c3a21a4d608c576ce39e2a23e5c9 elixir-src     Elixir 1.14.0's own source (the installed compiler's version): the stdlib comparison against the compiled exports, the edge-recall bench
"
GOALS="build test demo bench lint fuzz"

# Which files declare the needs of which goal (globs, relative to the root),
# and which of them must have a `needs:` line.
goal_files() {
  case "$1" in
    build) echo "Makefile" ;;
    test) echo "tests/harness.c tests/run.sh tests/support/*.c tests/unit/*.c tests/integration/*.c tests/e2e/*.c tests/fixtures/targets/build.sh" ;;
    demo) echo "scripts/demo.sh scripts/nexus.sh examples/nexus/mix.exs" ;;
    bench) echo "bench/run.sh bench/*.sh bench/*.c" ;;
    lint) echo "scripts/lint.sh" ;;
    fuzz) echo "scripts/fuzz.sh fuzz/*.c" ;;
  esac
}
REQUIRED="tests/unit/*.c tests/integration/*.c tests/e2e/*.c fuzz/*.c bench/bench_*.sh
  Makefile scripts/demo.sh scripts/lint.sh scripts/fuzz.sh examples/nexus/mix.exs"

GRAMMAR_VERSION=0.3.5
GRAMMAR_INTEGRITY="sha512-xozQMvYK0aSolcQZAx2d84Xe/YMWFuRPYFlLVxO01bM2GITh5jyiIp0TqPCQa8754UzRAI7A83hZmfiYub5TZQ=="
GRAMMAR_DIR="$here/build/tree-sitter-elixir"
# The parser runtime: the C library the npm `tree-sitter` package vendors
# (lib/src/lib.c builds as one file), compiled into the binary by the Makefile.
RUNTIME_VERSION=0.25.1
RUNTIME_INTEGRITY="sha512-mrcEdkYtHfrK1A6fs3O6FxkBo0Qig5XUXqHhxUOQu0bmPo00QF4XaSx4edpazdHwxnSCjlGKGgIqWdaN4dvTLA=="
RUNTIME_DIR="$here/build/tree-sitter-runtime"

die() { echo "deps.sh: $*" >&2; exit 1; }

known_goal() { case " $GOALS " in *" $1 "*) return 0 ;; esac; return 1; }

# The table's rows as "package goals", without comments and blank lines.
table_rows() { printf '%s\n' "$PACKAGES" | awk 'NF >= 2 { print $1, $2 }'; }

# The packages the table gives to `goal` itself (not through build).
table_packages() {
  table_rows | awk -v g="$1" '{ n = split($2, gs, ","); for (i = 1; i <= n; i++) if (gs[i] == g) print $1 }'
}

# The pinned sources' rows: "name goals file bytes sha256 dir".
source_rows() { printf '%s\n' "$SOURCES" | awk 'NF >= 6 { print $1, $2, $3, $4, $5, $6 }'; }

# The pinned sources a goal fetches.
goal_sources() {
  source_rows | awk -v g="$1" '{ n = split($2, gs, ","); for (i = 1; i <= n; i++) if (gs[i] == g) print $1 }'
}

# The packages a goal installs: its own, plus build's for the goals that build.
goal_packages() {
  case "$1" in
    test | demo | bench | fuzz) table_packages build ;;
  esac
  table_packages "$1"
}

# The packages of the goals in the arguments that neither build nor lint needs.
extra_packages() {
  local base g
  base=" $(goal_packages build | tr '\n' ' ') $(goal_packages lint | tr '\n' ' ') "
  for g in "$@"; do table_packages "$g"; done | awk '!seen[$0]++' | while read -r p; do
    [[ "$base" == *" $p "* ]] || echo "$p"
  done
}

# The words of `file`'s needs: line; fails when it has none.
needs_of() {
  local line
  line=$(head -n 40 "$here/$1" | grep -m 1 -E '^[[:space:]]*(/\*|#|%+|\*|//)?[[:space:]]*needs:' || true)
  [ -n "$line" ] || return 1
  line=${line#*needs:}
  line=${line%%\*/*}
  echo "$line"
}

# Checks one goal's declarations; prints one line per problem, fails on any.
check_goal() {
  local goal=$1 problems=0 have file word
  have=" $(goal_packages "$goal" | tr '\n' ' ') $(goal_sources "$goal" | tr '\n' ' ') "
  local all=" $(table_rows | awk '{ print $1 }' | tr '\n' ' ') $(source_rows | awk '{ print $1 }' | tr '\n' ' ') "
  # shellcheck disable=SC2046
  for file in $(cd "$here" && eval "ls -d $(goal_files "$goal")" 2>/dev/null); do
    local seen=" " words cur declared=" "
    local -a todo=("$file")
    while [ "${#todo[@]}" -gt 0 ]; do
      cur=${todo[0]}
      todo=("${todo[@]:1}")
      case "$seen" in *" $cur "*) continue ;; esac
      seen="$seen$cur "
      if [ ! -f "$here/$cur" ]; then
        echo "deps.sh: $file needs what $cur needs, but there is no $cur"
        problems=$((problems + 1))
        continue
      fi
      if ! words=$(needs_of "$cur"); then
        [ "$cur" = "$file" ] && continue
        echo "deps.sh: $file needs what $cur needs, but $cur has no needs: line"
        problems=$((problems + 1))
        continue
      fi
      for word in $words; do
        case "$word" in
          */*) todo+=("$word") ;;
          *)
            local via=""
            [ "$cur" = "$file" ] || via=" (through $cur)"
            declared="$declared$word "
            if [[ "$all" != *" $word "* ]]; then
              echo "deps.sh: $file needs $word$via, a package the table of scripts/deps.sh does not know (nor its SOURCES): add it there with its goals"
              problems=$((problems + 1))
            elif [[ "$have" != *" $word "* ]]; then
              echo "deps.sh: $file needs $word$via, which goal '$goal' does not install: add '$goal' to $word's goals in scripts/deps.sh"
              problems=$((problems + 1))
            fi
            ;;
        esac
      done
    done
    # A package a C file checks for with TH_NEED must be declared too.
    if [[ "$file" == *.c ]]; then
      for word in $(th_need_strings "$file"); do
        if [[ "$all" == *" $word "* && "$declared" != *" $word "* ]]; then
          echo "deps.sh: $file checks for $word (TH_NEED) but its needs: line does not declare it"
          problems=$((problems + 1))
        fi
      done
    fi
  done
  [ "$problems" -eq 0 ]
}

# The string literals inside the TH_NEED(...) calls of a C file.
th_need_strings() {
  tr '\n' ' ' <"$here/$1" | grep -oE 'TH_NEED\([^;]*;' | grep -oE '"[^"]*"' | tr -d '"' || true
}

check_required() {
  local problems=0 file
  # shellcheck disable=SC2086
  for file in $(cd "$here" && eval "ls -d $REQUIRED" 2>/dev/null); do
    if ! needs_of "$file" >/dev/null; then
      echo "deps.sh: $file has no needs: line near its top (an empty 'needs:' says build's packages are enough)"
      problems=$((problems + 1))
    fi
  done
  [ "$problems" -eq 0 ]
}

cmd_check() {
  local goals="${*:-$GOALS}" failed=0 g
  for g in $goals; do
    known_goal "$g" || die "unknown goal '$g' ($GOALS)"
    check_goal "$g" >&2 || failed=1
  done
  check_required >&2 || failed=1
  [ "$failed" -eq 0 ] || die "the package lists miss what their targets declare (see above)"
  echo "deps.sh: every goal installs what its targets declare ($goals)"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

cmd_install() {
  local want="" missing="" p g
  for g in "${@:-build}"; do
    known_goal "$g" || { echo "deps.sh: unknown goal '$g' ($GOALS)" >&2; exit 2; }
    want="$want $(goal_packages "$g" | tr '\n' ' ')"
  done
  for p in $want; do
    if ! installed "$p"; then
      # node and npm may come from outside Debian's packages on some images.
      if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
      case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
    fi
  done
  if [ -n "$missing" ]; then
    echo "deps.sh: installing:$missing" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    # Another apt (unattended upgrades, a second make in another checkout)
    # may hold dpkg's lock: wait for it up to 10 minutes rather than fail.
    local lock=(-o DPkg::Lock::Timeout=600)
    $sudo apt-get "${lock[@]}" update -qq || die "apt-get update failed; cannot install:$missing"
    # shellcheck disable=SC2086
    $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends $missing >/dev/null ||
      die "apt-get install failed for:$missing"
    for p in $missing; do
      installed "$p" || die "$p is still not installed after apt-get install"
    done
  fi
  install_grammar
  for g in "${@:-build}"; do goal_sources "$g"; done | awk '!seen[$0]++' | while read -r src; do
    install_source "$src"
  done
  case " $* " in *" test "*) install_mcp_client ;; esac
  case " $* " in *" test "* | *" bench "*) install_browser_client ;; esac
}

# One npm package, pinned and checked against its integrity, unpacked once
# into `dir` (its `package/` prefix stripped): name, version, integrity, dir,
# then the paths inside the package to unpack.
install_npm_pack() {
  local name=$1 version=$2 integrity=$3 dir=$4 tmp tgz got
  shift 4
  [ ! -f "$dir/.ok-$version" ] || return 0
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null) || die "npm pack $name@$version failed"
  tgz="$tmp/$name-$version.tgz"
  got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
  [ "$got" = "$integrity" ] || die "$name@$version integrity mismatch: got $got"
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xzf "$tgz" -C "$dir" --strip-components=1 "$@"
  touch "$dir/.ok-$version"
}

# The Elixir grammar and the parser runtime, pinned and checked, unpacked once.
install_grammar() {
  install_npm_pack tree-sitter-elixir "$GRAMMAR_VERSION" "$GRAMMAR_INTEGRITY" "$GRAMMAR_DIR" \
    package/src package/queries package/LICENSE package/package.json
  install_npm_pack tree-sitter "$RUNTIME_VERSION" "$RUNTIME_INTEGRITY" "$RUNTIME_DIR" \
    package/vendor/tree-sitter/lib package/LICENSE package/package.json
}

# The Debian archive's base URL: the first of the machine's apt sources
# that is the main archive (not -security), else deb.debian.org.
debian_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }'
    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }')
  uri=$(printf '%s\n' "$uri" | grep -E '^https?://' | grep -v -- '-security' | head -n 1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# One pinned source of the SOURCES table, fetched, checked, unpacked once
# into build/<dir> (its top directory stripped).
install_source() {
  local name=$1 row file bytes sum dir pkg url got
  row=$(source_rows | awk -v n="$name" '$1 == n') || true
  [ -n "$row" ] || die "no pinned source $name in the SOURCES table"
  read -r _ _ file bytes sum dir <<<"$row"
  dir="$here/build/$dir"
  [ ! -f "$dir/.ok-$file" ] || return 0
  pkg=${name#src:}
  local t
  t=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$t'" RETURN
  url="$(debian_mirror)/pool/main/${pkg:0:1}/$pkg/$file"
  curl -sSfL --retry 2 -o "$t/$file" "$url" || die "could not fetch $file ($name) from $url"
  got=$(stat -c %s "$t/$file")
  [ "$got" = "$bytes" ] || die "$file ($name, from $url): $got bytes, the pin says $bytes; not unpacked"
  got=$(sha256sum "$t/$file" | awk '{ print $1 }')
  [ "$got" = "$sum" ] || die "$file ($name, from $url): sha256 $got, the pin says $sum; not unpacked"
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xJf "$t/$file" -C "$dir" --strip-components=1 || die "could not unpack $file ($name) into $dir"
  touch "$dir/.ok-$file"
}

# The official MCP SDK (client side) for the MCP tests: pinned by
# tests/mcp/package-lock.json (every package with its integrity hash, checked
# by `npm ci`), the SDK's own hash checked here too; under build/ only.
MCP_SDK_VERSION=1.32.2
MCP_SDK_INTEGRITY="sha512-SWsVtH/0vULSQStoZ6xxH2K09Li8fXYTMC64ZeogCdpZ3XSi1eCPOByV1OpuJxuI3OcmHhosDWYyii07tpPsLw=="
MCP_SDK_DIR="$here/build/mcp-client"

install_mcp_client() {
  if [ ! -f "$MCP_SDK_DIR/.ok-$MCP_SDK_VERSION" ]; then
    locked=$(node -e 'const l=require(process.argv[1]);const p=l.packages["node_modules/@modelcontextprotocol/sdk"];process.stdout.write(p.version+" "+p.integrity)' "$here/tests/mcp/package-lock.json")
    if [ "$locked" != "$MCP_SDK_VERSION $MCP_SDK_INTEGRITY" ]; then
      echo "deps.sh: tests/mcp/package-lock.json does not pin @modelcontextprotocol/sdk@$MCP_SDK_VERSION with the expected integrity" >&2
      exit 1
    fi
    rm -rf "$MCP_SDK_DIR"
    mkdir -p "$MCP_SDK_DIR"
    cp "$here/tests/mcp/package.json" "$here/tests/mcp/package-lock.json" "$MCP_SDK_DIR/"
    (cd "$MCP_SDK_DIR" && npm ci --silent --ignore-scripts --no-audit --no-fund >/dev/null) ||
      die "npm ci of the MCP test client (@modelcontextprotocol/sdk@$MCP_SDK_VERSION) failed"
    touch "$MCP_SDK_DIR/.ok-$MCP_SDK_VERSION"
  fi
}

# puppeteer-core for the dashboard's browser tests and bench (it drives
# Debian's chromium; it downloads no browser): pinned by
# tests/browser/package-lock.json (every package with its integrity hash,
# checked by `npm ci`), its own hash checked here too; under build/ only.
# The dashboard itself uses no front-end library (docs/DASHBOARD.md).
PUPPETEER_VERSION=24.43.1
PUPPETEER_INTEGRITY="sha512-T5ScUMAsmhdNbgDR41AGESYeS6V9MSgetkSnVhhW+gXvzC42VesKCn5ld87gAZDJ6vLHL9GkRvY9WtQWSnwFbw=="
BROWSER_CLIENT_DIR="$here/build/browser-client"

install_browser_client() {
  [ ! -f "$BROWSER_CLIENT_DIR/.ok-$PUPPETEER_VERSION" ] || return 0
  local locked
  locked=$(node -e 'const l=require(process.argv[1]);const p=l.packages["node_modules/puppeteer-core"];process.stdout.write(p.version+" "+p.integrity)' "$here/tests/browser/package-lock.json")
  [ "$locked" = "$PUPPETEER_VERSION $PUPPETEER_INTEGRITY" ] ||
    die "tests/browser/package-lock.json does not pin puppeteer-core@$PUPPETEER_VERSION with the expected integrity"
  rm -rf "$BROWSER_CLIENT_DIR"
  mkdir -p "$BROWSER_CLIENT_DIR"
  cp "$here/tests/browser/package.json" "$here/tests/browser/package-lock.json" "$BROWSER_CLIENT_DIR/"
  (cd "$BROWSER_CLIENT_DIR" && npm ci --silent --ignore-scripts --no-audit --no-fund >/dev/null) ||
    die "npm ci of the browser test client (puppeteer-core@$PUPPETEER_VERSION) failed"
  touch "$BROWSER_CLIENT_DIR/.ok-$PUPPETEER_VERSION"
}

case "${1:-}" in
  --check) shift; cmd_check "$@" ;;
  --list)
    shift
    for g in "$@"; do known_goal "$g" || die "unknown goal '$g' ($GOALS)"; goal_packages "$g"; done | awk '!seen[$0]++'
    ;;
  --extra)
    shift
    for g in "$@"; do known_goal "$g" || die "unknown goal '$g' ($GOALS)"; done
    extra_packages "$@"
    ;;
  -*) die "unknown option '$1' (--check, --list, --extra)" ;;
  *) cmd_install "$@" ;;
esac
