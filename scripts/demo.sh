#!/usr/bin/env bash
# make demo: Giulia's story end to end on examples/nexus (docs/DEMO.md).
#
#   make demo                    # SCENARIO=default
#   make demo SCENARIO=logger    # synchronous vs asynchronous logging, compared
#   make demo SCENARIO=fix       # the registry before and after its fix (ETS), compared
#   make demo SCENARIO=all       # the reference article's seven sessions, in order,
#                                # then one line per session: the article's finding | ours
#   make demo SCENARIO=NAME      # one of them: saturate, idle, log-info, log-warning,
#                                # log-async, trace-registry, trace-both
#
# Environment: DEMO_SECONDS (load per run, default 30), DEMO_CONNECTIONS (wrk
# connections, default 16; the saturate session uses four times as many),
# DEMO_DIR (run directory, default build/demo), NEXUS_NODE / NEXUS_PORT
# (default nexus@127.0.0.1 / 4040), GIULIA_BIN (the directory of the giulia
# binaries, default bin/), GIULIA_WORKER_URL / GIULIA_MONITOR_URL (default
# http://127.0.0.1:4000 and :4001; `giulia serve` listens there).
#
# Steps: build and start the target; start `giulia serve`; index
# examples/nexus; `giulia-observe start` (with call counting on the traced
# modules of the session); the mixed load; `giulia-observe stop` (prints the
# fused profile); the HTML report. The seven sessions share one target node
# and change it between sessions as the article did (the level, the log
# mode, the per-query log) with `scripts/nexus.sh eval`. The logger scenario
# turns the target's per-query log on (one line per SQL query besides the
# one per request), runs the load with synchronous logging, switches the
# running node to the asynchronous settings, runs it again, and compares the
# two profiles. The fix scenario runs the default load, switches the running
# node's registry to its ETS cache (the fix the profile advises), runs it
# again, and compares. Whatever the demo started is stopped on exit, on
# error and on Ctrl-C.
#
# Until the daemons and profiles are built (`giulia help` lists no `serve`
# or no `profile`), the demo runs its interim form (default, logger and fix
# only): the static results of whatever static commands exist, one-shot
# runtime views if `pulse`/`top`/`trace` exist, and the load's own numbers.
# needs: curl wrk jq scripts/nexus.sh examples/nexus/mix.exs
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

scenario=${SCENARIO:-default}
seconds=${DEMO_SECONDS:-30}
conns=${DEMO_CONNECTIONS:-16}
run=${DEMO_DIR:-$here/build/demo}
bindir=${GIULIA_BIN:-$here/bin}
giulia=$bindir/giulia
observe=$bindir/giulia-observe
project=$here/examples/nexus
traced=Nexus.Repo,Nexus.Registry.TableRegistry
export NEXUS_NODE=${NEXUS_NODE:-nexus@127.0.0.1}
export NEXUS_PORT=${NEXUS_PORT:-4040}
export NEXUS_RUN_DIR=$run/nexus
export GIULIA_WORKER_URL=${GIULIA_WORKER_URL:-http://127.0.0.1:4000}
export GIULIA_MONITOR_URL=${GIULIA_MONITOR_URL:-http://127.0.0.1:4001}

sessions="saturate idle log-info log-warning log-async trace-registry trace-both"
case " default logger fix all $sessions " in *" $scenario "*) ;; *)
  echo "demo: SCENARIO must be default, logger, fix, all or one of: $sessions; not '$scenario'" >&2
  exit 2
  ;;
esac
case "$seconds" in '' | *[!0-9]*) echo "demo: DEMO_SECONDS must be a number of seconds" >&2; exit 2 ;; esac
case "$conns" in '' | *[!0-9]*) echo "demo: DEMO_CONNECTIONS must be a number" >&2; exit 2 ;; esac

step() { printf '\n==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }

# -- What is there ------------------------------------------------------------
for tool in elixir wrk curl jq; do
  command -v "$tool" >/dev/null || { scripts/deps.sh demo; break; }
done
[ -x "$giulia" ] || make -j2 --no-print-directory all
help_text=$("$giulia" help 2>/dev/null || true)
has() { grep -qE "^[[:space:]]+$1([[:space:]]|\$)" <<<"$help_text"; }
full=1
missing=""
for c in serve profile; do has "$c" || { full=0; missing="$missing $c"; }; done
[ "$scenario" != default ] && ! has compare && { full=0; missing="$missing compare"; }
case "$scenario" in default | logger | fix) ;; *)
  [ "$full" = 1 ] || { echo "demo: SCENARIO=$scenario needs giulia's daemons and profiles (missing:$missing)" >&2; exit 2; }
  ;;
esac

# -- Cleanup, whatever happens ----------------------------------------------------
observing=0
serve_pid=""
load_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
  if [ "$observing" = 1 ]; then
    "$observe" stop "$NEXUS_NODE" >"$run/interrupted-stop.txt" 2>&1 || true
  fi
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill -TERM "$serve_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  scripts/nexus.sh stop 2>/dev/null || true
  exit "$rc"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted; stopping what it started" >&2; exit 130' INT TERM

mkdir -p "$run"
chmod 700 "$run"

# -- The target ---------------------------------------------------------------
start_target() { # $1: log mode; $2: level of the per-query log
  step "Starting the target: $NEXUS_NODE, HTTP on 127.0.0.1:$NEXUS_PORT (log level info, mode $1, query log $2)"
  scripts/nexus.sh build
  rm -rf "$NEXUS_RUN_DIR"
  NEXUS_LOG_MODE=$1 NEXUS_QUERY_LOG=$2 scripts/nexus.sh start
  cookie=$(cat "$NEXUS_RUN_DIR/cookie")
  note "cookie: $NEXUS_RUN_DIR/cookie (mode 0600)"
}

# Runs the load in the foreground; $1: label, $2: connections (default
# DEMO_CONNECTIONS; 0: no load, the node is left idle for the same time).
# Leaves its summary in $run/load-$1.txt.
run_load() {
  local c=${2:-$conns}
  if [ "$c" = 0 ]; then
    step "No load: the node idles for $seconds s"
    sleep "$seconds"
    echo "nexus-load: idle duration_s=$seconds requests=0 rps=0" >"$run/load-$1.txt"
    return 0
  fi
  if [ "${NEXUS_LOAD_MIX:-mixed}" = export ]; then
    step "Load: $seconds s of CSV exports (CPU-bound requests), $c connections"
  else
    step "Load: $seconds s of mixed requests (87% reads, 13% writes), $c connections"
  fi
  scripts/nexus.sh load "$seconds" "$c" | tee "$run/load-$1.txt"
}

load_summary() { grep '^nexus-load:' "$run/load-$1.txt" | sed 's/^nexus-load: //' || true; }

# -- Full form: daemons, observation, fused profile ----------------------------------
start_giulia() {
  step "Starting giulia serve (worker $GIULIA_WORKER_URL, monitor $GIULIA_MONITOR_URL)"
  for url in "$GIULIA_WORKER_URL" "$GIULIA_MONITOR_URL"; do
    if curl -s -o /dev/null --max-time 2 "$url/health"; then
      echo "demo: something already answers on $url; stop it first" >&2
      exit 1
    fi
  done
  mkdir -p "$run/giulia-data"
  # serve listens where the URLs point (host:port of http://host:port/...)
  hostport() { local u=${1#*://}; echo "${u%%/*}"; }
  "$giulia" serve --data "$run/giulia-data" --worker-listen "$(hostport "$GIULIA_WORKER_URL")" \
    --monitor-listen "$(hostport "$GIULIA_MONITOR_URL")" >"$run/giulia.log" 2>&1 &
  serve_pid=$!
  local deadline=$((SECONDS + 30))
  for url in "$GIULIA_WORKER_URL" "$GIULIA_MONITOR_URL"; do
    until curl -sf -o /dev/null --max-time 2 "$url/health"; do
      kill -0 "$serve_pid" 2>/dev/null || { tail -n 20 "$run/giulia.log" >&2; echo "demo: giulia serve exited" >&2; exit 1; }
      [ $SECONDS -lt $deadline ] || { echo "demo: $url/health does not answer; see $run/giulia.log" >&2; exit 1; }
      sleep 0.2
    done
  done
  note "log: $run/giulia.log"
}

index_project() {
  step "Indexing examples/nexus (POST /api/index/scan)"
  curl -sf -X POST -H 'Content-Type: application/json' \
    -d "{\"path\":\"$project\"}" "$GIULIA_WORKER_URL/api/index/scan" | tee "$run/index.json"
  echo
}


# One observed run; $1: label, $2: traced modules (default $traced; "-":
# none), $3: connections (run_load). Sets profile_id; the profile's JSON is
# in $run/profile-$1.json. $overhead, when set, is passed as --overhead
# (unset: the default budget, 5%, whose counts are estimates).
observed_run() {
  local mods=${2:-$traced}
  local args=("$NEXUS_NODE" "$cookie" 1000)
  [ "$mods" = - ] || args+=("$mods")
  [ -z "${overhead:-}" ] || args+=(--overhead "$overhead")
  local lp=
  if [ -n "${LOAD_FIRST:-}" ]; then
    # the load starts first and the observer attaches to a node already
    # under it (a second longer, so that every snapshot falls inside it)
    (seconds=$((seconds + 1)) run_load "$1" "${3:-}") &
    lp=$!
    sleep 1
  fi
  step "giulia-observe start $NEXUS_NODE <cookie> 1000 ${mods/#-/(no traced modules)}"
  "$observe" start "${args[@]}" --project "$project"
  observing=1
  if [ -n "$lp" ]; then wait "$lp"; else run_load "$1" "${3:-}"; fi
  step "giulia-observe stop $NEXUS_NODE: the fused profile"
  "$observe" stop "$NEXUS_NODE" | tee "$run/profile-$1.txt"
  observing=0
  profile_id=$(sed -n 's/^profile id: \([0-9][0-9]*\).*/\1/p' "$run/profile-$1.txt" | tail -n 1)
  [ -n "$profile_id" ] || profile_id=latest
  echo "$profile_id" >"$run/profile-$1.id"
  "$giulia" profile "$profile_id" --format json >"$run/profile-$1.json"
}

# The target's logging between sessions: $1 level, $2 mode (default, sync,
# async), $3 level of the per-query log (debug: silent at level info).
set_logging() {
  step "Target logging: level $1, mode $2, per-query log at $3"
  scripts/nexus.sh eval "'Elixir.Logger':configure([{level, $1}]), 'Elixir.Nexus.Logging':apply_mode($2), persistent_term:put({'Elixir.Nexus.Repo', query_log}, $3)." >/dev/null
}

# -- The reference article's seven sessions ------------------------------------
# Each sets the node as the article's session had it, observes it, and keeps
# its profile's JSON for the summary.
# First contact: CPU-bound requests (CSV exports, NEXUS_LOAD_MIX=export)
# from four times the connections, already running when the observer
# attaches (a node found under load; no snapshot of the ramp-up). The registry's metadata is kept in ETS
# for this session (set_mode(ets)), so that requests are not queued behind
# the one registry process but pile up on the schedulers, as on the
# article's node; it goes back to the database afterwards, the flaw the
# later sessions trace.
session_saturate() {
  set_logging info default debug
  scripts/nexus.sh eval "'Elixir.Nexus.Registry.TableRegistry':set_mode(ets)." >/dev/null
  LOAD_FIRST=1 NEXUS_LOAD_MIX=export observed_run saturate - $((conns * 4))
  scripts/nexus.sh eval "'Elixir.Nexus.Registry.TableRegistry':set_mode(db)." >/dev/null
}
session_idle() {
  set_logging info default debug
  observed_run idle - 0
}
session_log_info() {
  set_logging info sync info
  observed_run log-info -
}
session_log_warning() {
  set_logging warning sync info
  observed_run log-warning -
  step "giulia compare (info -> warning level, the same load)"
  "$giulia" compare "$(cat "$run/profile-log-info.id")" "$profile_id" | tee "$run/compare-level.txt"
}
session_log_async() {
  set_logging info async info
  observed_run log-async -
  step "giulia compare (synchronous -> asynchronous logging, level info, the same load)"
  "$giulia" compare "$(cat "$run/profile-log-info.id")" "$profile_id" | tee "$run/compare-async.txt"
}
# The two trace sessions count every call (--overhead 0): their findings
# are exact ratios set beside the article's (lookups per request, the read
# share, helper calls per operation), which a budget's estimates would blur.
session_trace_registry() {
  set_logging info default debug
  overhead=0 observed_run trace-registry Nexus.Registry.TableRegistry
}
session_trace_both() {
  set_logging info default debug
  overhead=0 observed_run trace-both "$traced"
}

# What Giulia found in session $1 (from its profile's JSON), one line.
finding_of() {
  local f=$run/profile-$1.json rps req
  rps=$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' "$run/load-$1.txt" | head -n 1)
  req=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' "$run/load-$1.txt" | head -n 1)
  local common='def pct: if . == null then "-" else (. * 1000 | round / 10 | tostring) + "%" end;
    def num: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
    def logger: ([.processes.logger[]?.reductions_share] | add // 0);
    def warn: [.recommendations[] | select(.severity != "low")];
    def ids: [.recommendations[] | .ids[]?] | unique | join(",");'
  case "$1" in
    saturate) jq -r "$common"'"run queue avg \(.metrics.run_queue.avg | num), peak \(.metrics.run_queue.peak | num), utilisation \(.metrics.scheduler_utilisation.avg | pct); rules: \(ids | if . == "" then "none" else . end)"' "$f" ;;
    idle) jq -r "$common"'"\(warn | length) warning(s); utilisation \(.metrics.scheduler_utilisation.avg | pct), run queue \(.metrics.run_queue.avg | num), \(.metrics.reductions_per_second.avg | round) reductions/s; hottest process \(.processes.top_cpu[0].module // "-")"' "$f" ;;
    log-info | log-warning | log-async) jq -r "$common"'"logger \(logger | pct) of reductions, callers blocked in log calls \(.executing.blocked.logger_share_of_samples | pct) (in other calls \((.executing.blocked.share_of_samples // 0) - (.executing.blocked.logger_share_of_samples // 0) | pct)), run queue avg \(.metrics.run_queue.avg | num), hottest \(.hot_modules[0].module // "-")"' "$f" ;;
    trace-registry) jq -r --argjson req "${req:-0}" "$common"'(.workload[] | select(.module == "Nexus.Registry.TableRegistry")) as $w | "registry \($w.operations | round) lookups for \($req) requests (\(if $req > 0 then $w.operations / $req | num else "-" end) per request), \($w.operations_per_second | round)/s; handle_call/3 \([.trace_hotspots[] | select(.function == "handle_call" and .module == $w.module) | .class][0] // "-") with the repo untraced; rules: \(ids | if . == "" then "none" else . end)"' "$f" ;;
    trace-both) jq -r "$common"'(.workload[] | select(.module == "Nexus.Repo")) as $w | "Repo \($w.read_share | pct) reads (\($w.read_write_ratio | num):1), pipeline \(.pipeline_overhead.ratio | num) helper calls/op (\(.pipeline_overhead.verdict // "-"), band <= \(.pipeline_overhead.normal_max)); utilisation \(.metrics.scheduler_utilisation.avg | pct), run queue avg \(.metrics.run_queue.avg | num), blocked \(.executing.blocked.share_of_samples | pct) of the sampled time, \(.executing.blocked.database_share_of_blocked | pct) of it on the database path; rules: \(ids)"' "$f" ;;
  esac | tr -d '\n'
  [ -z "$rps" ] || printf '; %s req/s' "$rps"
  echo
}

article_of() {
  case "$1" in
    saturate) echo "first contact under load: run queue 17, CPU-bound work piling up" ;;
    idle) echo "idle baseline: :code_server hottest, simply healthy" ;;
    log-info) echo "info logging under load: the logger nearly a third of CPU" ;;
    log-warning) echo ":warning level: logger share rose, run queue 1 -> 5 (cost per call)" ;;
    log-async) echo "async handler: logger gone from the top, run queue halved" ;;
    trace-registry) echo "registry trace: every CRUD operation through one lookup" ;;
    trace-both) echo "registry + repo: 87% reads (6.9:1), pipeline 1.38x normal, registry -> ETS" ;;
  esac
}

replay_summary() {
  step "The seven sessions: the article's finding | Giulia's finding (this machine, indicative)"
  local i=0 s
  for s in $sessions; do
    i=$((i + 1))
    [ -f "$run/profile-$s.json" ] || continue
    printf '%d. %-15s %s\n   %17s| %s\n' "$i" "$s" "$(article_of "$s")" "" "$(finding_of "$s")" | tee -a "$run/replay.txt"
  done
}

full_demo() {
  start_giulia
  index_project
  case "$scenario" in
    all | saturate | idle | log-info | log-warning | log-async | trace-registry | trace-both)
      start_target default debug
      : >"$run/replay.txt"
      rm -f "$run"/profile-*.json "$run"/profile-*.id
      local s list=$scenario
      [ "$scenario" = all ] && list=$sessions
      # log-warning and log-async are compared with log-info: run it first.
      case "$scenario" in log-warning | log-async) list="log-info $scenario" ;; esac
      for s in $list; do
        step "Session: $s ($(article_of "$s"))"
        "session_${s//-/_}"
      done
      replay_summary
      ;;
    default)
      start_target default debug
      observed_run default
      local html=$run/nexus-profile.html
      "$giulia" profile latest --format html --out "$html"
      step "Report"
      note "HTML report: $html"
      note "load: $(load_summary default)"
      ;;
    logger)
      start_target sync info
      observed_run sync
      local a=$profile_id
      step "Switching the target's Logger to the asynchronous settings (Nexus.Logging.apply_mode(:async))"
      scripts/nexus.sh eval "'Elixir.Nexus.Logging':apply_mode(async)."
      observed_run async
      local b=$profile_id
      step "giulia compare $a $b (synchronous -> asynchronous logging)"
      "$giulia" compare "$a" "$b" | tee "$run/compare.txt"
      "$giulia" profile "$b" --format html --out "$run/nexus-profile-async.html"
      step "Report"
      note "HTML report (asynchronous run): $run/nexus-profile-async.html"
      note "load, synchronous logging:  $(load_summary sync)"
      note "load, asynchronous logging: $(load_summary async)"
      ;;
    fix)
      start_target default debug
      observed_run before
      local a=$profile_id
      step "Applying the fix: the registry keeps its metadata in ETS (TableRegistry.set_mode(:ets))"
      scripts/nexus.sh eval "'Elixir.Nexus.Registry.TableRegistry':set_mode(ets)."
      observed_run after
      local b=$profile_id
      step "giulia compare $a $b (registry in the database -> in ETS)"
      "$giulia" compare "$a" "$b" | tee "$run/compare.txt"
      "$giulia" profile "$b" --format html --out "$run/nexus-profile-fixed.html"
      step "Report"
      note "HTML report (after the fix): $run/nexus-profile-fixed.html"
      note "load, registry in the database: $(load_summary before)"
      note "load, registry in ETS:          $(load_summary after)"
      ;;
  esac
}

# -- Interim form ---------------------------------------------------------------
static_views() {
  step "Static view of examples/nexus"
  if ! has index; then
    note "(the static engine is not built yet: \`giulia help\` lists no \`index\`)"
    return 0
  fi
  "$giulia" index "$project" --db "$run/index.db" || { note "(giulia index failed)"; return 0; }
  local q
  for q in "hubs" "dependents Nexus.Repo" "dependents Nexus.Registry.TableRegistry" "complexity --top 10"; do
    # shellcheck disable=SC2086
    if has "${q%% *}"; then
      step "giulia $q"
      "$giulia" $q --db "$run/index.db" || note "(giulia $q failed)"
    fi
  done
}

runtime_views() { # while the load runs
  local c
  for c in pulse top trace; do has "$c" || { note "(\`giulia $c\` is not built yet)"; return 0; }; done
  sleep 3
  step "giulia top $NEXUS_NODE (one-shot, during the load)"
  "$giulia" top "$NEXUS_NODE" --cookie "$cookie" -n 8 || true
  step "giulia trace $NEXUS_NODE $traced --for 5000"
  "$giulia" trace "$NEXUS_NODE" "$traced" --cookie "$cookie" --for 5000 || true
}

interim_run() { # $1: label
  step "Load: $seconds s of mixed requests (87% reads, 13% writes), $conns connections"
  scripts/nexus.sh load "$seconds" "$conns" >"$run/load-$1.txt" 2>&1 &
  load_pid=$!
  runtime_views
  wait "$load_pid" || true
  load_pid=""
  cat "$run/load-$1.txt"
}

interim_demo() {
  step "Interim demo: \`giulia help\` lacks:$missing (daemons and fused profiles not built yet)"
  note "Running what exists: the target under load, static and one-shot runtime views."
  static_views
  if [ "$scenario" = default ]; then
    start_target default debug
    interim_run default
    step "Summary"
    note "load: $(load_summary default)"
  elif [ "$scenario" = logger ]; then
    start_target sync info
    interim_run sync
    step "Switching the target's Logger to the asynchronous settings"
    scripts/nexus.sh eval "'Elixir.Nexus.Logging':apply_mode(async)."
    interim_run async
    step "Summary"
    note "load, synchronous logging:  $(load_summary sync)"
    note "load, asynchronous logging: $(load_summary async)"
  else
    start_target default debug
    interim_run before
    step "Applying the fix: the registry keeps its metadata in ETS"
    scripts/nexus.sh eval "'Elixir.Nexus.Registry.TableRegistry':set_mode(ets)."
    interim_run after
    step "Summary"
    note "load, registry in the database: $(load_summary before)"
    note "load, registry in ETS:          $(load_summary after)"
  fi
  note "target log: $NEXUS_RUN_DIR/nexus.log"
}

if [ "$full" = 1 ]; then full_demo; else interim_demo; fi
step "Done; stopping what the demo started"
