%% session/10_scan.erl - the session's text, part: the scan of every process.
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

%% ---- The scan: every process, in compiled code ----
%% Per process the scan reads `reductions` and `message_queue_len` with one
%% process_info/2 call each (these are read directly; items such as `memory`
%% make every process handle a signal: 8x the cost, and it wakes every idle
%% process), in lists:zipwith/3 over the BIF as an external fun, and turns
%% the results into what it keeps with match specifications run by
%% ets:match_spec_run/2 (compiled once per session; nothing is stored in any
%% table). erl_eval only steps from one chunk of 5,000 processes to the next,
%% checking the time budget. What is kept between scans is the list of pids
%% and the list of their reductions: when the node has the same processes as
%% at the previous scan (a quiet node), the deltas are one subtraction of the
%% two lists; else the previous reductions are looked up in a map built for
%% that scan. Only processes whose reductions went up go on (a quiet node's
%% handful), and only they are sorted.
MsCompile = fun ets:match_spec_compile/1,
MsRun = fun ets:match_spec_run/2,
MsCandidate = MsCompile([{{'_', '$1'}, [], ['$1']}]),
MsMemory = MsCompile([{{{memory, '$1'}, '$2'}, [], [{{'$1', '$2'}}]}]),
MsMiss = MsCompile([{{'$1', miss}, [], ['$1']}]),
%% Memory of the heap-size candidates, exactly, for the top list by memory.
ByMemory = fun(Candidates) ->
    Pids = MsRun(lists:sublist(Candidates, 2 * TopN + 8), MsCandidate),
    Mems = lists:zipwith(fun erlang:process_info/2, Pids, lists:duplicate(length(Pids), memory)),
    lists:reverse(lists:sort(MsRun(lists:zip(Mems, Pids), MsMemory)))
end,
MsReds = MsCompile([{{reductions, '$1'}, [], ['$1']}, {'_', [], [-1]}]),
MsQueue = MsCompile([{{{message_queue_len, '$1'}, '$2'}, [{'>', '$1', 0}], [{{'$1', '$2'}}]}]),
MsHeap = MsCompile([{{{heap_size, '$1'}, '$2'}, [], [{{'$1', '$2'}}]}]),
MsSwap = MsCompile([{{'$1', '$2'}, [], [{{'$2', '$1'}}]}]),
PiAll = fun(Pids, Item) ->
    lists:zipwith(fun erlang:process_info/2, Pids, lists:duplicate(length(Pids), Item))
end,
%% The items' list for a chunk, made once: a shorter chunk takes a tail.
ChunkReds = lists:duplicate(ChunkSize, reductions),
%% process_info's answers for a chunk, kept as they are ({reductions, N},
%% or undefined for a process that died): Ran matches them against the
%% previous scan's in one match specification, so that no pass over every
%% process only unwraps them (each pass over the list costs a reduction or
%% two per process: at 100k processes, a fifth of the scan).
ScanChunk = fun(Chunk, Len) ->
    lists:zipwith(fun erlang:process_info/2, Chunk, lists:nthtail(ChunkSize - Len, ChunkReds))
end,
%% {ScannedPids, Infos, Partial}
ScanLoop = fun ScanLoop(All, Rest, Left, Deadline, Done, Rs) ->
    case Left =:= 0 orelse (Done > 0 andalso Now() > Deadline) of
        true ->
            {case Left of 0 -> All; _ -> lists:sublist(All, Done) end,
             case Rs of [R] -> R; _ -> lists:append(lists:reverse(Rs)) end, Left > 0};
        false ->
            Take = min(ChunkSize, Left),
            {Chunk, Rest2} = case Take of
                                 Left -> {Rest, []};
                                 _ -> lists:split(Take, Rest)
                             end,
            ScanLoop(All, Rest2, Left - Take, Deadline, Done + Take, [ScanChunk(Chunk, Take) | Rs])
    end
end,
%% The processes with a message queue, [{Len, Pid}]. A message that reaches
%% a waiting process wakes it, and its reductions go up (checked on OTP 25:
%% about 15 per message, matched or not), so between full reads only the
%% processes that ran and those that had a queue are read again; a process
%% that cannot run (suspended) is caught by the full read every
%% HeapFullEvery scans.
QueueScan = fun(Pids, RanPids, Prev, Full) ->
    Read = case Full of
               true -> Pids;
               false -> RanPids ++ [P || {_, P} <- Prev]
           end,
    MsRun(lists:zip(PiAll(Read, message_queue_len), Read), MsQueue)
end,
%% [{Delta, Pid}] of the processes whose reductions went up since Prev
%% ({PrevPids, PrevInfos}, process_info's answers as ScanChunk keeps them);
%% a process born since counts from 0, one that died is left out.
MsRan = MsCompile([{{{reductions, '$1'}, {reductions, '$2'}, '$3'}, [{'>', '$1', '$2'}],
                    [{{{'-', '$1', '$2'}, '$3'}}]}]),
Ran = fun(Pids, Infos, {PrevPids, PrevInfos}) ->
    Before = case Pids =:= PrevPids of
                 true -> PrevInfos;
                 false ->
                     N = length(Pids),
                     PrevMap = maps:from_list(lists:zip(PrevPids, PrevInfos)),
                     lists:zipwith3(fun maps:get/3, Pids, lists:duplicate(N, PrevMap),
                                    lists:duplicate(N, {reductions, 0}))
             end,
    MsRun(lists:zip3(Infos, Before, Pids), MsRan)
end,
HeapOf = fun(Pids) -> MsRun(lists:zip(PiAll(Pids, heap_size), Pids), MsHeap) end,
%% The Wide processes with the largest heaps, largest first. A process's
%% heap changes only when it runs (it collects its own garbage), so between
%% full reads only the processes that ran are read again and the others keep
%% their place: no process outside the previous list can have passed its
%% smallest heap without running, so the new list is exact down to that
%% size. When fewer than TopN entries are that sure, when a quarter of the
%% processes ran, or every HeapFullEvery scans, every heap is read.
HeapFullEvery = 10,
HeapScan = fun(Pids, RanPids, {Prev, Floor0}, Scans) ->
    Full = Prev =:= [] orelse Scans rem HeapFullEvery =:= 0 orelse
           4 * length(RanPids) > length(Pids),
    FullRead = fun() ->
                   L = TopWide(HeapOf(Pids)),
                   {L, case L of [] -> 0; _ -> element(1, lists:last(L)) end}
               end,
    case Full of
        true -> FullRead();
        false ->
            %% the processes that ran and the listed ones read again (an
            %% exited one drops out); a process in neither did not run and
            %% was at most the floor of the last full read: the list is
            %% exact down to that floor, which is carried until the next
            %% full read
            Merged = TopWide(lists:ukeysort(2, HeapOf(RanPids ++ MsRun(Prev, MsCandidate)))),
            Sure = MsRun(Merged, MsCompile([{{'$1', '_'}, [{'>=', '$1', Floor0}], ['$1']}])),
            case length(Sure) >= TopN of
                true -> {Merged, Floor0};
                false -> FullRead()
            end
    end
end,
%% Our own processes (the session process and its guardian) are left out of
%% every list; their pids are kept in the session state.
WithoutMine = fun(L, Mine) -> lists:foldl(fun(P, A) -> lists:keydelete(P, 2, A) end, L, Mine) end,

%% Process details for the few processes in the top lists.
MFA = fun({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) -> {M, F, A};
         (_) -> null end,
%% What the lists need from a process dictionary: '$initial_call' (proc_lib
%% processes) and whether the process is an observer's: a session process
%% of this or another Giulia (a pulse, a trace, `top`), a guardian, or the
%% process that starts a session. {InitialCall | null, Kind | none}.
ObserverKeys = [giulia_session, giulia_guardian, giulia_probe],
DictOf = fun(Pid) ->
    try erlang:process_info(Pid, {dictionary, '$initial_call'}) of
        undefined -> {null, none};
        {{dictionary, '$initial_call'}, V} ->
            Kind = lists:foldl(fun(K, none) ->
                                       case erlang:process_info(Pid, {dictionary, K}) of
                                           {{dictionary, K}, undefined} -> none;
                                           {{dictionary, K}, _} -> K;
                                           _ -> none
                                       end;
                                  (_, Found) -> Found
                               end, none, ObserverKeys),
            {MFA(V), Kind}
    catch
        error:badarg ->
            case erlang:process_info(Pid, dictionary) of
                {dictionary, D} ->
                    {MFA(proplists:get_value('$initial_call', D)),
                     case [K || K <- ObserverKeys, lists:keymember(K, 1, D)] of
                         [] -> none;
                         [K1 | _] -> K1
                     end};
                _ -> {null, none}
            end
    end
end,
ModuleOf = fun(Reg, Dict, Init, Cur) ->
    RegMod = is_atom(Reg) andalso Reg =/= [] andalso erlang:module_loaded(Reg),
    if RegMod -> Reg;
       is_tuple(Dict) -> element(1, Dict);
       is_tuple(Init) -> element(1, Init);
       is_tuple(Cur) -> element(1, Cur);
       true -> null
    end
end,
%% What a process's entry in a list needs that does not change while it
%% lives, looked up once per session (at most DetailCacheCap processes are
%% remembered): {InitialCall, Module, Kind}, or gone. Module is the
%% registered name when it names a module, else the module of
%% '$initial_call', else of initial_call (as the process was first seen).
DetailCacheCap = 5000,
StaticOf = fun(Pid) ->
    case erlang:process_info(Pid, [registered_name, initial_call]) of
        [{registered_name, Reg}, {initial_call, Init0}] ->
            {Dict, Kind} = DictOf(Pid),
            Init = MFA(Init0),
            {case Dict of null -> Init; _ -> Dict end, ModuleOf(Reg, Dict, Init, null), Kind};
        _ -> gone
    end
end,
DetailItems = [registered_name, current_function, memory, message_queue_len],
%% Rows {Pid, Info, {Static, Delta}} become the list's maps (built by the
%% match specification, cpu_share against Work), {observer, Kind, Pid} for
%% an observer's process (left out of the lists, its reductions out of the
%% node's), or nothing for a process that has exited.
DetailMs = fun(Work) ->
    Share = case Work > 0 of true -> {'/', '$4', Work}; false -> 0.0 end,
    Shared = fun(Guard, ShareOut) ->
        {{'$1', [{registered_name, '$2'}, {current_function, '$3'}, {memory, '$6'},
                 {message_queue_len, '$7'}],
          {{'$8', '$9', none}, '$4'}}, Guard,
         [#{pid => '$1', registered_name => '$2', initial_call => '$8',
            current_function => '$3', module => '$9', reductions => '$4',
            cpu_share => ShareOut, memory_bytes => '$6', message_queue_len => '$7'}]}
    end,
    MsCompile([{{'$1', '_', {{'_', '_', '$5'}, '_'}}, [{'=/=', '$5', none}],
                [{{observer, '$5', '$1'}}]},
               Shared([{'>', '$4', max(1, Work)}], 1.0),
               Shared([], Share)])
end,
%% (defined once: a fun written inside a function is made again, its
%% variables looked up, at every call)
CacheStatic = fun(P, C) -> C#{P => StaticOf(P)} end,
%% The first TopN processes of a candidate list ([{Value, Pid}], best first)
%% that are not an observer's: {Maps, [{Kind, Pid}], S} (S keeps the cache).
Listed = fun(Candidates, DeltaMap, Ms, S) ->
    Pids = MsRun(lists:sublist(Candidates, TopN + 8), MsCandidate),
    N = length(Pids),
    Cache0 = case maps:get(dcache, S, #{}) of
                 Big when map_size(Big) > DetailCacheCap -> #{};
                 C0 -> C0
             end,
    Known = lists:zipwith3(fun maps:get/3, Pids, lists:duplicate(N, Cache0),
                           lists:duplicate(N, miss)),
    Cache = lists:foldl(CacheStatic, Cache0, MsRun(lists:zip(Pids, Known), MsMiss)),
    Rows = lists:zip3(Pids,
                      lists:zipwith(fun erlang:process_info/2, Pids,
                                    lists:duplicate(N, DetailItems)),
                      lists:zip(lists:zipwith3(fun maps:get/3, Pids, lists:duplicate(N, Cache),
                                               lists:duplicate(N, gone)),
                                lists:zipwith3(fun maps:get/3, Pids, lists:duplicate(N, DeltaMap),
                                               lists:duplicate(N, 0)))),
    {Maps, Observers} = lists:partition(fun erlang:is_map/1, MsRun(Rows, Ms)),
    {lists:sublist(Maps, TopN), [{K, P} || {observer, K, P} <- Observers], S#{dcache => Cache}}
end,

%% The five largest ETS tables by memory.
WordSize = erlang:system_info(wordsize),
%% A table's id as ~p prints it, without io_lib:format's cost (thousands of
%% reductions per call).
EtsId = fun(T) when is_reference(T) -> list_to_binary(erlang:ref_to_list(T));
           (T) when is_atom(T) -> list_to_binary(io_lib:write_atom(T));
           (T) -> iolist_to_binary(io_lib:format("~p", [T]))
        end,
%% What a listed table's row says that does not change while the table keeps
%% its name and owner ({Table, Name, Owner} -> its name, id and the owner's
%% module), remembered from one snapshot to the next for the tables of the
%% last list only (in the session's dictionary, at most 5 entries): the
%% owner's module means reading the owner's dictionary, which OTP 25 can
%% only copy whole, and a long-lived owner's can be large (35k reductions
%% per snapshot were measured on an idle Elixir node); each interpreted call
%% costs the session thousands of reductions besides.
EtsStatic = fun({T, Name, OwnerPid}) when is_atom(Name), is_pid(OwnerPid) ->
                   #{name => atom_to_binary(Name, utf8), id => EtsId(T),
                     owner_module =>
                         case catch erlang:process_info(OwnerPid, [registered_name, initial_call,
                                                                   current_function]) of
                             [{registered_name, R}, {initial_call, I}, {current_function, C}] ->
                                 ModuleOf(R, element(1, DictOf(OwnerPid)), MFA(I), MFA(C));
                             _ -> null
                         end};
               (_) -> gone
            end,
%% ets:info(T, Item) of every table of Tabs (N of them), in one compiled pass.
EtsInfos = fun(Tabs, N, Item) -> lists:zipwith(fun ets:info/2, Tabs, lists:duplicate(N, Item)) end,
EtsTop = fun() ->
    Tabs = lists:sublist(ets:all(), 100000),
    Mems = EtsInfos(Tabs, length(Tabs), memory),
    {Words, Top} = lists:unzip(lists:sublist(lists:reverse(lists:sort(
                                   proplists:delete(undefined, lists:zip(Mems, Tabs)))), 5)),
    N = length(Top),
    Keys = lists:zip3(Top, EtsInfos(Top, N, name), EtsInfos(Top, N, owner)),
    Known = case get(giulia_ets_static) of #{} = K0 -> K0; _ -> #{} end,
    Static = [case Known of #{Key := Known1} -> Known1; _ -> EtsStatic(Key) end || Key <- Keys],
    put(giulia_ets_static, maps:from_list(lists:zip(Keys, Static))),
    [Row#{size => Size, memory_bytes => W * WordSize}
     || {Row, Size, W} <- lists:zip3(Static, EtsInfos(Top, N, size), Words),
        is_map(Row), is_integer(Size)]
end,

%% Totals of the whole node, kept to compute deltas over the interval; `own`
%% is the session process's own reductions (part of `reds`), so that the
%% snapshot can say how much of the node's work was the observer's.
Totals = fun() ->
    %% exact: statistics(reductions) leaves out the running processes'
    %% current slices, and our own count includes ours
    {Reds, _} = erlang:statistics(exact_reductions),
    {reductions, OwnReds} = erlang:process_info(self(), reductions),
    {GcCount, GcWords, _} = erlang:statistics(garbage_collection),
    {{input, In}, {output, Out}} = erlang:statistics(io),
    Swt = case erlang:statistics(scheduler_wall_time) of
              undefined -> undefined;
              L -> lists:sort(L)
          end,
    #{t => Now(), tu => erlang:monotonic_time(microsecond), reds => Reds, own => OwnReds, gc_count => GcCount, gc_words => GcWords,
      io_in => In, io_out => Out, swt => Swt}
end,
Utilisation = fun(Old, New, Online) ->
    Pairs = [{(A1 - A0), (T1 - T0)} || {{I, A0, T0}, {I, A1, T1}} <- lists:zip(
                 lists:sublist(Old, Online), lists:sublist(New, Online))],
    Per = [if T > 0 -> A / T; true -> 0.0 end || {A, T} <- Pairs],
    {SumA, SumT} = lists:foldl(fun({A, T}, {SA, ST}) -> {SA + A, ST + T} end, {0, 0}, Pairs),
    Total = if SumT > 0 -> SumA / SumT; true -> null end,
    #{total => Total, per_scheduler => Per}
end,

%% Call counts per function of the traced modules since the last read: a
%% plain read of the counters against the previous one, which leaves them
%% running (pause and restart would each wait for every scheduler, tens of
%% milliseconds on a loaded node, and calls made meanwhile would be lost).
ReadCalls = fun(S) ->
    Prev = maps:get(c_prev, S, #{}),
    Read = lists:append([begin
        Counts = CcInfo(MFAs),
        [{Key, C} || {Key, {call_count, C}} <- lists:zip(MFAs, Counts), is_integer(C)]
    end || {_M, MFAs} <- maps:get(traced, S)]),
    Calls = [{Mo, F, A, D} || {{Mo, F, A} = Key, C} <- Read,
                              D <- [C - maps:get(Key, Prev, 0)], D > 0],
    {Calls, S#{c_prev => maps:from_list(Read)}}
end,

