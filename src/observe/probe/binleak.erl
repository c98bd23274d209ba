%% binleak.erl - which processes hold refc binary memory they no longer
%% need: recon:bin_leak/1's answer, measured per process. NOT read-only:
%% it forces a garbage collection of every process it looks at (that is
%% the point; the caller asked for it explicitly). Evaluated on the target
%% by erl_eval in the process its rpc server spawns for the call (see
%% dist.h); nothing is loaded and nothing is left behind.
%%
%% Args: #{max => N, scan_max => M, budget_ms => B}.
%%
%% For each process (erlang:processes/0's order, at most scan_max, and no
%% new one once budget_ms has passed): the sizes of the refc binaries it
%% references (process_info(P, binary), each binary's full size, as recon
%% counts it), erlang:garbage_collect(P), the same again. The observer's
%% own processes (dictionary key giulia_session, giulia_guardian or
%% giulia_probe, and this one) are neither measured nor collected. A
%% process that exits in between is skipped.
%%
%% Returns {ok, #{count, scanned, collected, cut, freed_bytes,
%% binary_before, binary_after, elapsed_ms, processes => [Map]}}: the
%% max processes that freed the most, most first (none that freed nothing).
Max = maps:get(max, Args),
Budget = maps:get(budget_ms, Args),
Start = erlang:monotonic_time(millisecond),
All = erlang:processes(),
Procs = lists:sublist(All, maps:get(scan_max, Args)),
Me = self(),
ObserverKeys = [giulia_session, giulia_guardian, giulia_probe],
%% process_info(P, {dictionary, K}) is OTP 26+; before, the whole dictionary
Ours = fun(P) ->
    P =:= Me orelse
        try lists:any(fun(K) ->
                              case erlang:process_info(P, {dictionary, K}) of
                                  {{dictionary, K}, undefined} -> false;
                                  {{dictionary, K}, _} -> true;
                                  _ -> false
                              end
                      end, ObserverKeys)
        catch error:badarg ->
                case erlang:process_info(P, dictionary) of
                    {dictionary, D} -> lists:any(fun(K) -> lists:keymember(K, 1, D) end, ObserverKeys);
                    _ -> false
                end
        end
end,
BinOf = fun(P) ->
    case erlang:process_info(P, binary) of
        {binary, Bins} -> {lists:sum([S || {_, S, _} <- Bins]), length(Bins)};
        _ -> undefined
    end
end,
MemBefore = erlang:memory(binary),
Step = fun Step([], Acc, N, C) -> {lists:reverse(Acc), N, C, false};
           Step([P | Rest], Acc, N, C) ->
               case erlang:monotonic_time(millisecond) - Start > Budget of
                   true -> {lists:reverse(Acc), N, C, true};
                   false ->
                       case Ours(P) of
                           true -> Step(Rest, Acc, N + 1, C);
                           false ->
                               case BinOf(P) of
                                   undefined -> Step(Rest, Acc, N + 1, C);
                                   {B0, N0} ->
                                       _ = erlang:garbage_collect(P),
                                       case BinOf(P) of
                                           undefined -> Step(Rest, Acc, N + 1, C + 1);
                                           {B1, N1} ->
                                               Step(Rest, [{B0 - B1, P, B0, N0, B1, N1} | Acc],
                                                    N + 1, C + 1)
                                       end
                               end
                       end
               end
       end,
{Measured, Scanned, Collected, Cut} = Step(Procs, [], 0, 0),
Top = lists:sublist([M || M <- lists:reverse(lists:keysort(1, Measured)), element(1, M) > 0], Max),
NameOf = fun(P) ->
    case erlang:process_info(P, registered_name) of
        {registered_name, N} when is_atom(N) -> atom_to_binary(N, utf8);
        _ -> null
    end
end,
Mfa = fun({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
              [atom_to_binary(M, utf8), atom_to_binary(F, utf8), A];
         (_) -> null end,
Call = fun(P) ->
    case erlang:process_info(P, [current_function, dictionary]) of
        [{current_function, CF}, {dictionary, D}] ->
            {Mfa(CF), case lists:keyfind('$initial_call', 1, D) of
                          {_, IC} -> Mfa(IC);
                          _ -> case erlang:process_info(P, initial_call) of
                                   {initial_call, IC} -> Mfa(IC);
                                   _ -> null
                               end
                      end};
        _ -> {null, null}
    end
end,
Rows = [begin
            {CF, IC} = Call(P),
            #{pid => list_to_binary(pid_to_list(P)), registered_name => NameOf(P),
              current_function => CF, initial_call => IC,
              freed_bytes => F, before_bytes => B0, before_count => N0,
              after_bytes => B1, after_count => N1}
        end || {F, P, B0, N0, B1, N1} <- Top],
{ok, #{count => length(All), scanned => Scanned, collected => Collected, cut => Cut,
       freed_bytes => lists:sum([F || {F, _, _, _, _, _} <- Measured]),
       binary_before => MemBefore, binary_after => erlang:memory(binary),
       elapsed_ms => erlang:monotonic_time(millisecond) - Start,
       processes => Rows}}.
