#!/usr/bin/env bash
# The inspection views (`giulia process`, `ets`, `ports`, `apps`, `alloc`,
# `binleak`; docs/OBSERVE.md "One process", "ETS tables", "Ports and
# sockets", "Applications and supervision", "Memory you can act on"): what
# each costs the target, against the same reads compiled on the target (the
# equivalent of recon:info/1, an ETS listing and recon:inet_window compiled
# there; bench only, Giulia never loads a module) (BENCHMARKS.md
# "Inspection views").
#
#   bench/bench_inspect.sh
#
# The target: an Erlang node with a process of 5000 dictionary keys, 3
# links, 2 monitors and 20 queued messages (big), a small gen_event
# (small), 1000 ETS tables and 200 loopback TCP connections. Two measures:
#  1. in the target, one process, $calls calls in a row: each probe as
#     Giulia sends it (scanned, parsed and interpreted by erl_eval) against
#     the same source compiled into a module generated here, with window 0
#     and the default caps: microseconds per call, and the ratio;
#  2. the target's own CPU (utime+stime of its beam.smp, /proc) over $runs
#     runs of each, alternated $rounds times: `giulia process` (a connection,
#     the OTP check, the probe), `erl_call -e 'ref_process:run(...)'` and
#     `erl_call -e 'ok.'` (the connection alone): CPU ms per call, and
#     Giulia's less the connection over the compiled call less the
#     connection.
# needs: erlang-base python3
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/giulia-bench-inspect.XXXXXX)
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
calls=${BENCH_CALLS:-200}
runs=${BENCH_RUNS:-60}
rounds=${BENCH_ROUNDS:-3}
erl_call_bin=$(ls -d /usr/lib/erlang/lib/erl_interface-*/bin/erl_call | tail -n 1)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# The compiled references: each probe's very text as the body of run/1.
for probe in process ets ports apps alloc binleak; do
  {
    echo "-module(ref_$probe)."
    echo "-export([run/1])."
    echo "run(Args) ->"
    grep -v '^%%' "src/observe/probe/$probe.erl"
  } >"$work/ref_$probe.erl"
  erlc -o "$work" "$work/ref_$probe.erl"
done

name="bench_inspect_$$@127.0.0.1"
cookie="c$RANDOM$RANDOM"
erl -name "$name" -setcookie "$cookie" -noshell -pa "$work" -eval '
  {ok, _} = gen_event:start({local, small}),
  Peers = [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, 3)],
  Big = spawn(fun() ->
      [put({k, I}, {value, I}) || I <- lists:seq(1, 5000)],
      [link(P) || P <- Peers],
      erlang:monitor(process, whereis(small)),
      erlang:monitor(process, hd(Peers)),
      receive stop -> ok end end),
  register(big, Big),
  [Big ! {msg, I} || I <- lists:seq(1, 20)],
  register(tables, spawn(fun() ->
      [begin T = ets:new(t, [public]), ets:insert(T, [{K} || K <- lists:seq(1, I rem 50)]) end
       || I <- lists:seq(1, 1000)],
      receive stop -> ok end end)),
  {ok, L} = gen_tcp:listen(0, [binary, {active, true}]),
  {ok, Port} = inet:port(L),
  register(sockets, spawn(fun() ->
      Cs = [begin {ok, C} = gen_tcp:connect("127.0.0.1", Port, []), {ok, A} = gen_tcp:accept(L), {C, A} end
            || _ <- lists:seq(1, 200)],
      receive stop -> Cs end end)).' >"$work/node.log" 2>&1 &
node_pid=$!
disown "$node_pid" # killed at exit without a job notice
for _ in $(seq 1 100); do
  "$erl_call_bin" -name "$name" -c "$cookie" -a 'erlang whereis [big]' 2>/dev/null | grep -q '<' && break
  sleep 0.2
done
beam=$(pgrep -P "$node_pid" beam.smp || echo "$node_pid")
[ -r "/proc/$beam/stat" ] || beam=$node_pid

args='#{who => {name, [<<"NAME">>]}, window_ms => 0, stack_depth => 32, list_max => 100,
        keys_max => 100, item_chars => 400, state_chars => 4000, dict_values => false,
        messages => 0, messages_copy_max => 10000, state => false, state_timeout_ms => 1000}'
ets_args='#{sort => memory, max => 30, scan_max => 200000}'
ports_args='#{window_ms => 0, max => 30, scan_max => 100000, cnode => <<"none">>}'
apps_args='#{app => null, depth => 4, width => 50, nodes_max => 2000, scan_max => 2000000,
             call_timeout_ms => 1000, budget_ms => 3000}'
alloc_args='#{max => 20}'
binleak_args='#{max => 10, scan_max => 100000, budget_ms => 5000}'

echo "machine: $(nproc) cores, OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().')"
echo
echo "1. in the target, $calls calls in a row (microseconds per call, median of 3)"
printf '%-16s %12s %12s %8s\n' view interpreted compiled ratio
for view in process:big process:small ets ports apps alloc binleak; do
  probe=${view%%:*}
  who=${view#*:}
  case $probe in
    process) a=${args//NAME/$who} ;;
    ets) a=$ets_args ;;
    ports) a=$ports_args ;;
    apps) a=$apps_args ;;
    alloc) a=$alloc_args ;;
    binleak) a=$binleak_args ;; # forces a GC of every process, each call
  esac
  out=$("$erl_call_bin" -name "$name" -c "$cookie" -e <<EOF
{ok, Src} = file:read_file("$(pwd)/src/observe/probe/$probe.erl"),
Args = $a,
Interp = fun() ->
    {ok, T, _} = erl_scan:string(binary_to_list(Src)),
    {ok, E} = erl_parse:parse_exprs(T),
    {value, V, _} = erl_eval:exprs(E, #{'Args' => Args}), V end,
Comp = fun() -> ref_$probe:run(Args) end,
Time = fun(F) -> lists:nth(2, lists:sort([begin
    T0 = erlang:monotonic_time(microsecond),
    [F() || _ <- lists:seq(1, $calls)],
    (erlang:monotonic_time(microsecond) - T0) / $calls end || _ <- [1, 2, 3]])) end,
{ok, _} = Interp(), {ok, _} = Comp(),
{Time(Interp), Time(Comp)}.
EOF
)
  python3 - "$view" "$out" <<'EOF'
import re, sys
view, out = sys.argv[1], sys.argv[2]
i, c = [float(x) for x in re.findall(r'[\d.]+(?:e[+-]?\d+)?', out)[-2:]]
print(f"{view:<16} {i:12.0f} {c:12.0f} {i / c:8.1f}")
EOF
done

echo
echo "2. giulia process big: the target's CPU per call, with a new connection each ($runs calls x $rounds rounds)"
declare -A total
for m in giulia compiled connection; do total[$m]=0; done
for r in $(seq 1 "$rounds"); do
  for m in giulia compiled connection; do
    t0=$(ticks "$beam")
    for _ in $(seq 1 "$runs"); do
      case $m in
        giulia) bin/giulia process "$name" big --cookie "$cookie" --window 1 --json >/dev/null ;;
        compiled) echo "ref_process:run(${args//NAME/big}#{window_ms => 1})." |
          "$erl_call_bin" -name "$name" -c "$cookie" -e >/dev/null ;;
        connection) echo "ok." | "$erl_call_bin" -name "$name" -c "$cookie" -e >/dev/null ;;
      esac
    done
    t1=$(ticks "$beam")
    total[$m]=$((total[$m] + t1 - t0))
  done
done
python3 - "$hz" "$runs" "$rounds" "${total[giulia]}" "${total[compiled]}" "${total[connection]}" <<'EOF'
import sys
hz, runs, rounds, g, c, n = (float(x) for x in sys.argv[1:])
per = lambda t: 1000.0 * t / hz / (runs * rounds)
print(f"giulia process (connection, OTP check, probe)  {per(g):6.2f} ms")
print(f"erl_call, compiled reads                       {per(c):6.2f} ms")
print(f"erl_call, connection alone                     {per(n):6.2f} ms")
if c > n:
    print(f"probe over compiled reads, connection excluded {(g - n) / (c - n):6.1f}x")
EOF
