%% top_ref.erl - the reference for bench/bench_top.sh: what recon's
%% proc_window/3 does (two snapshots of every process's attribute and its
%% names over a window, the deltas keyed by pid in a dict, the top N by a
%% bounded selection), written here for the bench, compiled and loaded on
%% the bench's own target only. Never part of the product.
-module(top_ref).
-export([proc_window/3]).

proc_window(Attr, N, Ms) ->
    First = attrs(Attr),
    timer:sleep(Ms),
    Last = attrs(Attr),
    top_n(window(First, Last), N).

%% [{Pid, Value, [Name | InitialCall, CurrentFunction]}] of every process
%% but the caller; a process that died in between is skipped.
attrs(Attr) ->
    Me = self(),
    [{P, V, Names} || P <- processes(), P =/= Me,
                      {V, Names} <- info(Attr, P)].

info(Attr, P) ->
    case process_info(P, [Attr, registered_name, current_function, initial_call]) of
        [{_, V}, {registered_name, Reg}, Cur, Init] ->
            [{V, [Reg || is_atom(Reg)] ++ [Init, Cur]}];
        undefined -> []
    end.

%% The last value less the first, per pid (a process born in the window
%% counts from 0).
window(First, Last) ->
    Before = dict:from_list([{P, V} || {P, V, _} <- First]),
    [{P, case dict:find(P, Before) of {ok, V0} -> V - V0; error -> V end, Names}
     || {P, V, Names} <- Last].

%% The N largest by value, largest first: one pass keeping the best N.
top_n(L, N) ->
    lists:reverse(lists:foldl(fun(E, Best) -> keep(E, Best, N) end, [], L)).

keep(E, Best, N) when length(Best) < N -> insert(E, Best);
keep({_, V, _} = E, [{_, Min, _} | Rest], _) when V > Min -> insert(E, Rest);
keep(_, Best, _) -> Best.

%% Best is sorted smallest first.
insert(E, []) -> [E];
insert({_, V, _} = E, [{_, W, _} = H | T]) when V > W -> [H | insert(E, T)];
insert(E, L) -> [E | L].
