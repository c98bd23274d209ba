%% storage.erl - evaluated on the target by erl_eval (see dist.h), once at
%% an observation's end: where the node keeps its tables, for the rules'
%% storage model (docs/RULES.md, "Where data lives"). Args: ignored.
%% Returns {ok, [Line]}, each line a binary "kind<TAB>name<TAB>storage<TAB>
%% size<TAB>memory_words":
%%   mnesia  Table  ram_copies | disc_copies | disc_only_copies | unknown
%%   dets    Name   dets  (DETS files open outside mnesia)
%% Bounded: mnesia is asked only when it runs here (nothing is started,
%% nothing loaded), at most 300 tables of each kind; table_info reads
%% mnesia's own ETS tables. Names that are not atoms are skipped.
Cap = 300,
Text = fun(X) when is_atom(X) -> erlang:atom_to_binary(X, utf8);
          (X) when is_integer(X) -> erlang:integer_to_binary(X);
          (_) -> <<"?">>
       end,
Info = fun(T, Item) -> try mnesia:table_info(T, Item) catch _:_ -> unknown end end,
Named = case erlang:whereis(mnesia_controller) of
    undefined -> [];
    _ -> [T || T <- (try mnesia:system_info(local_tables) catch _:_ -> [] end),
               is_atom(T), T =/= schema]
end,
Mnesia = [<<"mnesia\t", (Text(T))/binary, "\t", (Text(Info(T, storage_type)))/binary, "\t",
            (Text(Info(T, size)))/binary, "\t", (Text(Info(T, memory)))/binary>>
          || T <- lists:sublist(Named, Cap)],
%% DETS files of their own (mnesia's disc_only_copies tables are open DETS
%% files too, listed above).
Dets = try dets:all() of
    Open when is_list(Open) ->
        [<<"dets\t", (Text(D))/binary, "\tdets\t",
           (Text(try dets:info(D, size) catch _:_ -> unknown end))/binary, "\t?">>
         || D <- lists:sublist([D || D <- Open, is_atom(D), not lists:member(D, Named)], Cap)]
catch _:_ -> []
end,
{ok, Mnesia ++ Dets}.
