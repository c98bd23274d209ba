%% top.erl - one-shot `giulia top`: the busiest processes over a window.
%% Evaluated on the target by erl_eval in the process its rpc server spawns
%% for the call (see dist.h); nothing is loaded and nothing is left behind.
%%
%% Args: #{cnode => the caller's node name (monitored), window_ms, top_n,
%%         by => reductions | memory | message_queue, scan_cap}.
%%
%% Small on purpose: a one-shot's cost on the target is mostly erl_eval
%% parsing the probe and building its closures (the whole session, 1.9k
%% lines, was 0.1 s of CPU per `top`), so this is a few statements with few
%% variables (erl_eval merges its environment after every argument). Every
%% per-process step runs compiled: BIFs as external funs in lists:zipwith/3,
%% match specifications by ets:match_spec_run/2 (no table), lists:sort/1.
%% Reductions of every process are read before and after the window (a
%% process born in it counts from 0, one that died is dropped); only the
%% few candidates of the list get their details.
%%
%% As the session does: an observer's process (a session, guardian or probe
%% of any Giulia: giulia_session, giulia_guardian, giulia_probe in its
%% dictionary) is never listed and its reductions are left out of the
%% node's; this process marks itself as a probe. When the caller's node
%% disconnects during the window this process exits at once. At most
%% scan_cap processes are read (a note says so).
%%
%% Returns a sample as session.erl's: #{window_ms, top_processes => #{By =>
%% [Map]}, errors => [Text]}.
put(giulia_probe, top),
erlang:monitor_node(maps:get(cnode, Args), true),
TopN = maps:get(top_n, Args),
Pi = fun erlang:process_info/2,
Dup = fun lists:duplicate/2,
MsRun = fun ets:match_spec_run/2,
Cap = maps:get(scan_cap, Args),
{Total0, _} = erlang:statistics(reductions),
{reductions, Own0} = erlang:process_info(self(), reductions),
Ps0 = lists:sublist(erlang:processes(), Cap),
R0 = lists:zipwith(Pi, Ps0, Dup(length(Ps0), reductions)),
T0 = erlang:monotonic_time(millisecond),
receive {nodedown, _} -> exit(normal) after maps:get(window_ms, Args) -> ok end,
All = erlang:processes(),
Ps1 = lists:sublist(All, Cap),
R1 = lists:zipwith(Pi, Ps1, Dup(length(Ps1), reductions)),
Window = erlang:monotonic_time(millisecond) - T0,
{reductions, Own1} = erlang:process_info(self(), reductions),
{Total1, _} = erlang:statistics(reductions),
%% [{Delta, Pid}], this process left out
Deltas = lists:keydelete(self(), 2, MsRun(
    lists:zip3(R1, case Ps1 =:= Ps0 of
                       true -> R0;
                       false -> lists:zipwith3(fun maps:get/3, Ps1,
                                               Dup(length(Ps1), maps:from_list(lists:zip(Ps0, R0))),
                                               Dup(length(Ps1), {reductions, 0}))
                   end, Ps1),
    ets:match_spec_compile([{{{reductions, '$1'}, {reductions, '$2'}, '$3'}, [],
                             [{{{'-', '$1', '$2'}, '$3'}}]}]))),
%% [{Value, Pid}] of the candidates, largest first (a few more than TopN:
%% observers among them are dropped)
Largest = fun(L, K) -> lists:sublist(lists:reverse(lists:sort(L)), K) end,
ValueOf = fun(Item, Pids, Guard) ->
    lists:keydelete(self(), 2, MsRun(lists:zip(lists:zipwith(Pi, Pids, Dup(length(Pids), Item)), Pids),
                                     ets:match_spec_compile([{{{Item, '$1'}, '$2'}, Guard,
                                                              [{{'$1', '$2'}}]}])))
end,
Busiest = Largest(MsRun(Deltas, ets:match_spec_compile([{{'$1', '_'}, [{'>', '$1', 0}], ['$_']}])), TopN + 8),
Candidates =
    case maps:get(by, Args) of
        reductions -> Busiest;
        message_queue -> Largest(ValueOf(message_queue_len, Ps1, [{'>', '$1', 0}]), TopN + 8);
        %% heap_size is read without a signal to each process (memory is
        %% not): the largest heaps are the candidates, their memory exact
        memory -> Largest(ValueOf(memory, [P || {_, P} <- Largest(ValueOf(heap_size, Ps1, []), 2 * TopN + 8)], []), TopN + 8)
    end,
Mfa = fun({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
         (_) -> null end,
Observer = fun(Dict) -> lists:any(fun(K) -> lists:keymember(K, 1, Dict) end,
                                  [giulia_session, giulia_guardian, giulia_probe]) end,
%% {observer, Delta} or {Delta, Map without cpu_share}; a process gone: none
Entry = fun({_, P}) ->
    Delta = case lists:keyfind(P, 2, Deltas) of {D, _} -> D; false -> 0 end,
    case erlang:process_info(P, [registered_name, current_function, initial_call, memory,
                                 message_queue_len, dictionary]) of
        [{_, Reg}, {_, Cur}, {_, Init0}, {_, Mem}, {_, Queue}, {_, Dict}] ->
            Init = Mfa(Init0),
            Proc = Mfa(proplists:get_value('$initial_call', Dict)),
            case Observer(Dict) of
                true -> {observer, Delta};
                false ->
                    {Delta, #{pid => P, registered_name => Reg, current_function => Cur,
                              initial_call => case Proc of null -> Init; _ -> Proc end,
                              module => case is_atom(Reg) andalso Reg =/= [] andalso
                                             erlang:module_loaded(Reg) of
                                            true -> Reg;
                                            false when Proc =/= null -> element(1, Proc);
                                            false when Init =/= null -> element(1, Init);
                                            false -> null
                                        end,
                              reductions => Delta, memory_bytes => Mem,
                              message_queue_len => Queue}}
            end;
        _ -> none
    end
end,
Entries = lists:map(Entry, Candidates),
%% observers among the busiest that the list by memory or mailbox did not
%% look at: their reductions are left out of the node's all the same
Unseen = [D || {D, P} <- Busiest, not lists:keymember(P, 2, Candidates),
               case erlang:process_info(P, dictionary) of
                   {dictionary, Dict} -> Observer(Dict);
                   _ -> false
               end],
Work = max(0, Total1 - Total0 - (Own1 - Own0) - lists:sum([D || {observer, D} <- Entries] ++ Unseen)),
#{window_ms => Window,
  top_processes => #{maps:get(by, Args) =>
      lists:sublist([M#{cpu_share => if Work > 0 -> min(1.0, D / Work); true -> 0.0 end}
                     || {D, M} <- Entries, is_map(M)], TopN)},
  errors => case length(All) > Cap of
                true -> [iolist_to_binary(io_lib:format("processes: scanned ~b of ~b (scan cap reached)",
                                                        [Cap, length(All)]))];
                false -> []
            end}.
