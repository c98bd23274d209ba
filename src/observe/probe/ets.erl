%% ets.erl - the ETS tables of the target, read-only: what observer_cli's
%% ETS view and observer's "Table Viewer" list. Evaluated on the target by
%% erl_eval in the process its rpc server spawns for the call (see dist.h);
%% nothing is loaded and no table is read, only ets:info.
%%
%% Args: #{sort => memory | size, max => N, scan_max => M}.
%%
%% The per-table work runs in compiled code (ets:info/2 handed to
%% lists:zipwith/3, lists:sort/1), so that a node with many tables is not
%% walked by the interpreter; only the first `max` tables of the order get
%% their full ets:info/1 and their owner's name. At most scan_max tables are
%% looked at (ets:all/0's order); a table deleted in between is skipped.
%%
%% Returns {ok, #{count, scanned, memory_bytes, tables => [Map]}}.
Sort = maps:get(sort, Args),
Max = maps:get(max, Args),
All = ets:all(),
Count = length(All),
Tabs = lists:sublist(All, maps:get(scan_max, Args)),
Keys = lists:zipwith(fun ets:info/2, Tabs, lists:duplicate(length(Tabs), Sort)),
Words = lists:zipwith(fun ets:info/2, Tabs, lists:duplicate(length(Tabs), memory)),
Wordsize = erlang:system_info(wordsize),
Total = lists:sum([W || W <- Words, is_integer(W)]) * Wordsize,
Ranked = lists:reverse(lists:sort(lists:zip(Keys, Tabs))),
Top = lists:sublist([T || {K, T} <- Ranked, is_integer(K)], Max),
Text = fun(A) when is_atom(A) -> atom_to_binary(A, utf8);
          (P) when is_pid(P) -> list_to_binary(pid_to_list(P));
          (R) when is_reference(R) -> list_to_binary(erlang:ref_to_list(R));
          (I) when is_integer(I) -> integer_to_binary(I);
          (_) -> null end,
NameOf = fun(P) when is_pid(P), node(P) =:= node() ->
                 case erlang:process_info(P, registered_name) of
                     {registered_name, N} when is_atom(N) -> atom_to_binary(N, utf8);
                     _ -> null
                 end;
            (_) -> null end,
Row = fun(T) ->
    case ets:info(T) of
        undefined -> [];
        Info ->
            Get = fun(K) -> proplists:get_value(K, Info) end,
            Owner = Get(owner),
            Heir = Get(heir),
            [#{id => Text(T),
               name => Text(Get(name)),
               named_table => Get(named_table),
               owner => Text(Owner),
               owner_name => NameOf(Owner),
               heir => case Heir of none -> null; _ -> Text(Heir) end,
               size => Get(size),
               memory_bytes => Get(memory) * Wordsize,
               type => Get(type),
               protection => Get(protection),
               keypos => Get(keypos),
               compressed => Get(compressed),
               read_concurrency => Get(read_concurrency),
               write_concurrency => case Get(write_concurrency) of
                                        B when is_boolean(B) -> B;
                                        W -> Text(W)
                                    end}]
    end
end,
{ok, #{count => Count,
       scanned => length(Tabs),
       memory_bytes => Total,
       tables => lists:append([Row(T) || T <- Top])}}.
