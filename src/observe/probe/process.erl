%% process.erl - one process of the target, read-only: what recon:info/1
%% and observer_cli's process view show. Evaluated on the target by erl_eval
%% in the process its rpc server spawns for the call (see dist.h); nothing
%% is loaded and nothing is left behind.
%%
%% Args: #{who => {pid, <<"<0.N.S>">>} | {name, [CandidateText]},
%%         window_ms, stack_depth, list_max, keys_max, item_chars, state_chars,
%%         dict_values (bool), messages (how many to show, 0: none),
%%         messages_copy_max, state (bool), state_timeout_ms}.
%%
%% No atom is created: a pid is parsed by list_to_pid (local pids only, the
%% C side checks the text), a name is compared as text against
%% erlang:registered(). Every list is capped (list_max), every rendered term
%% is cut at item_chars characters (the state at state_chars) and at a depth, the dictionary's values
%% and the messages are read only when asked, the messages only while the
%% queue is at most messages_copy_max long (process_info(P, messages) copies
%% the whole queue), and sys:get_status only for a proc_lib process, with a
%% timeout (a stuck process costs the wait, never a hang).
%%
%% Returns {ok, Map} or {error, Reason} (not_found, not_a_process).
PidText = fun(P) when is_pid(P) -> list_to_binary(pid_to_list(P));
             (P) when is_port(P) -> list_to_binary(erlang:port_to_list(P));
             (_) -> null end,
TextCut = fun(T, Depth, Chars) ->
    try unicode:characters_to_binary(io_lib:format("~0tP", [T, Depth], [{chars_limit, Chars}])) of
        B when is_binary(B) -> B;
        _ -> <<"?">>
    catch _:_ -> <<"?">>
    end
end,
ItemChars = maps:get(item_chars, Args),
Text = fun(T) -> TextCut(T, 12, ItemChars) end,
Mfa = fun({M, F, A}) when is_atom(M), is_atom(F) ->
              {atom_to_binary(M, utf8), atom_to_binary(F, utf8), if is_list(A) -> length(A); true -> A end};
         (_) -> null end,
Max = maps:get(list_max, Args),
Target =
    case maps:get(who, Args) of
        {pid, PText} ->
            try erlang:list_to_pid(binary_to_list(PText)) catch error:badarg -> undefined end;
        {name, Cands} ->
            case [Reg || Reg <- erlang:registered(), lists:member(atom_to_binary(Reg, utf8), Cands)] of
                [Found | _] -> erlang:whereis(Found);
                [] -> undefined
            end
    end,
NameOf = fun(P) when is_pid(P), node(P) =:= node() ->
                 case erlang:process_info(P, registered_name) of
                     {registered_name, N} when is_atom(N) -> atom_to_binary(N, utf8);
                     _ -> null
                 end;
            (P) when is_port(P) ->
                 case erlang:port_info(P, name) of
                     {name, N} -> unicode:characters_to_binary(N);
                     _ -> null
                 end;
            (_) -> null end,
Items = [registered_name, status, current_function, initial_call, message_queue_len,
         memory, heap_size, total_heap_size, stack_size, reductions, links, monitors,
         monitored_by, group_leader, trap_exit, priority, garbage_collection,
         current_stacktrace, dictionary, binary],
Info = case is_pid(Target) andalso node(Target) =:= node() of
           true -> erlang:process_info(Target, Items);
           false -> undefined
       end,
case Info of
    undefined when is_port(Target) -> {error, not_a_process};
    undefined -> {error, not_found};
    _ ->
        Get = fun(K) -> proplists:get_value(K, Info) end,
        W = maps:get(window_ms, Args),
        %% read apart from Info: a process handles the signal of a long
        %% process_info list itself, and is charged for it
        R0 = case erlang:process_info(Target, reductions) of
                 {reductions, RThen} -> RThen;
                 undefined -> Get(reductions)
             end,
        T0 = erlang:monotonic_time(microsecond),
        timer:sleep(W),
        {R1, Alive} = case erlang:process_info(Target, reductions) of
                          {reductions, RNow} -> {RNow, true};
                          undefined -> {R0, false}
                      end,
        Us = erlang:monotonic_time(microsecond) - T0,
        Dict = Get(dictionary),
        DictTotal = length(Dict),
        DictShown = lists:sublist(Dict, maps:get(keys_max, Args)),
        WithValues = maps:get(dict_values, Args),
        DictOut = [case WithValues of
                       true -> #{key => Text(K), value => Text(V)};
                       false -> #{key => Text(K)}
                   end || {K, V} <- DictShown],
        ProcLibCall = proplists:get_value('$initial_call', Dict),
        Ancestors = case proplists:get_value('$ancestors', Dict) of
                        L when is_list(L) -> [case A of
                                                  A when is_atom(A) -> atom_to_binary(A, utf8);
                                                  _ -> PidText(A)
                                              end || A <- lists:sublist(L, Max)];
                        _ -> []
                    end,
        Stack = [#{mfa => Mfa({M, F, A}),
                   file => case proplists:get_value(file, Loc) of
                               undefined -> null;
                               FileName -> unicode:characters_to_binary(FileName)
                           end,
                   line => case proplists:get_value(line, Loc) of
                               undefined -> null;
                               Ln -> Ln
                           end}
                 || {M, F, A, Loc} <- lists:sublist(Get(current_stacktrace),
                                                    maps:get(stack_depth, Args))],
        Links = Get(links),
        LinksOut = [#{id => PidText(L), name => NameOf(L)} || L <- lists:sublist(Links, Max)],
        Monitors = Get(monitors),
        MonitorsOut =
            [case Mon of
                 {process, P} when is_pid(P) -> #{kind => process, id => PidText(P), name => NameOf(P)};
                 {process, {N, Nd}} -> #{kind => process, id => null,
                                         name => atom_to_binary(N, utf8),
                                         node => atom_to_binary(Nd, utf8)};
                 {port, P} when is_port(P) -> #{kind => port, id => PidText(P), name => NameOf(P)};
                 {port, {N, Nd}} -> #{kind => port, id => null, name => atom_to_binary(N, utf8),
                                      node => atom_to_binary(Nd, utf8)};
                 _ -> #{kind => other, id => null, name => Text(Mon)}
             end || Mon <- lists:sublist(Monitors, Max)],
        MonBy = Get(monitored_by),
        MonByOut = [#{id => PidText(P), name => NameOf(P)} || P <- lists:sublist(MonBy, Max)],
        Bins = Get(binary),
        {BinCount, BinBytes} = lists:foldl(fun({_, Sz, _}, {C, S}) -> {C + 1, S + Sz} end,
                                           {0, 0}, Bins),
        Gc = Get(garbage_collection),
        Gl = Get(group_leader),
        QLen = Get(message_queue_len),
        WantMsgs = maps:get(messages, Args),
        CopyMax = maps:get(messages_copy_max, Args),
        Messages =
            if WantMsgs =:= 0 -> null;
               QLen > CopyMax ->
                   #{shown => [], refused => true};
               true ->
                   case erlang:process_info(Target, messages) of
                       {messages, Ms} ->
                           #{shown => [Text(Msg) || Msg <- lists:sublist(Ms, WantMsgs)],
                             refused => false};
                       undefined -> #{shown => [], refused => false}
                   end
            end,
        IsOtp = Get(initial_call) =:= {proc_lib, init_p, 5},
        State =
            case maps:get(state, Args) of
                false -> null;
                true when not IsOtp -> #{error => <<"not an OTP process (no proc_lib)">>};
                true ->
                    try sys:get_status(Target, maps:get(state_timeout_ms, Args)) of
                        St -> #{text => TextCut(St, 40, maps:get(state_chars, Args))}
                    catch
                        exit:{timeout, _} -> #{error => <<"timeout">>};
                        _:E -> #{error => Text(E)}
                    end
            end,
        Wordsize = erlang:system_info(wordsize),
        {ok, #{pid => PidText(Target),
               registered_name => case Get(registered_name) of
                                      RegName when is_atom(RegName), RegName =/= [] ->
                                          atom_to_binary(RegName, utf8);
                                      _ -> null
                                  end,
               alive => Alive,
               status => Get(status),
               current_function => Mfa(Get(current_function)),
               initial_call => Mfa(Get(initial_call)),
               proc_lib_initial_call => Mfa(ProcLibCall),
               ancestors => Ancestors,
               stack => Stack,
               message_queue_len => QLen,
               memory_bytes => Get(memory),
               heap_bytes => Get(heap_size) * Wordsize,
               total_heap_bytes => Get(total_heap_size) * Wordsize,
               stack_bytes => Get(stack_size) * Wordsize,
               reductions => R1,
               reductions_per_second => if Us > 0 -> (R1 - R0) * 1000000 / Us; true -> 0 end,
               window_ms => Us div 1000,
               links_count => length(Links),
               links => LinksOut,
               monitors_count => length(Monitors),
               monitors => MonitorsOut,
               monitored_by_count => length(MonBy),
               monitored_by => MonByOut,
               group_leader => #{id => PidText(Gl), name => NameOf(Gl)},
               trap_exit => Get(trap_exit),
               priority => Get(priority),
               minor_gcs => proplists:get_value(minor_gcs, Gc),
               fullsweep_after => proplists:get_value(fullsweep_after, Gc),
               min_heap_bytes => proplists:get_value(min_heap_size, Gc) * Wordsize,
               binaries => #{count => BinCount, bytes => BinBytes},
               dictionary => #{count => DictTotal, entries => DictOut},
               messages => Messages,
               state => State}}
end.
