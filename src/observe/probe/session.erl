%% session.erl - the observer's session process, as Erlang expressions.
%%
%% Evaluated on the target by erl_eval (no module is loaded): the C node sends
%% this text once per connection, the target parses it (erl_scan, erl_parse)
%% and evaluates it with `Args` bound to a map:
%%   owner      the C node's pid (replies go there)
%%   cnode      the C node's node name (monitored: nodedown detaches the session until the lease runs out)
%%   id         the session id (binary), kept in the process dictionary
%%   lease_ms   the session exits when no request came for that long; it
%%              rides out a lost connection for that long too (see attach)
%%   top_n      entries per top list
%%   scan_cap   at most this many processes are scanned per sample
%%   chunk      processes handled per step (the deadline is checked between steps)
%%   budget_ms  the scan stops (the sample is marked partial) after this long
%%   modules    [{DisplayName, [AtomText]}] (binaries): modules to count calls of,
%%              each with the atom texts it may have (the first loaded one wins)
%%   call_time  (optional, default false) also measure time per function of the
%%              traced modules in the hottest processes (see the call_time section)
%%   flag_cap   (optional, default 100) at most this many processes carry our
%%              `call` trace flag at once
%%   sample_period_ms, sample_k, sample_stack_k, sample_depth (optional): the
%%              sampler (see its section below; period 0 or absent: off)
%% It spawns one session process and returns {ok, Pid, Info} once that process
%% has set itself up, or {error, Reason}.
%%
%% Invariants of the session process:
%% - it holds the scheduler_wall_time flag (reference-counted per process by
%%   the runtime, so it drops when the process exits, however it exits) and
%%   the call_count trace patterns it set, on modules that had none before;
%% - on `stop` or an expired lease it removes its trace patterns, turns the
%%   flag off (restoring the previous state) and exits; nodedown of the C node
%%   only detaches it: it keeps its state and patterns until the lease
%%   expires, and a new connection of the observer takes it over with
%%   {attach, NewOwner} (the counters and the baseline restart then, so that
%%   nothing measured while detached is passed off as one interval);
%% - a guardian process removes the trace patterns if the session process is
%%   killed (exit(Pid, kill) gives no chance to clean up);
%% - user-given module names are converted with binary_to_existing_atom only:
%%   no atom is ever created from them;
%% - per-process loops run in compiled library code (lists, maps, proplists)
%%   with BIFs passed as external funs: erl_eval only steps over chunks;
%% - with call_time it also holds call_time patterns on the traced modules and
%%   the `call` process flag on at most flag_cap processes (it is their
%%   tracer); it never takes a process another tracer holds, never sets a
%%   pattern that sends messages, removes both on every ending, and the
%%   runtime drops the flags by itself when the session process dies.
%% - the sampler reads process_info of at most sample_k processes per tick and
%%   sets no pattern and no table; the only flag it sets, `running` on at most
%%   sample_stack_k processes with no other tracer, is removed before the
%%   tick returns (and dropped by the runtime if the session dies); when the
%%   work is in processes too short-lived to be candidates it also sets
%%   `running` as the new processes' default for sample_run_ms of a tick
%%   (only when no other tool holds that default), with a sink process as
%%   tracer that it kills before the tick returns (the default and the
%%   newborns' flags then read as none).
Owner = maps:get(owner, Args),
CNode = maps:get(cnode, Args),
Id = maps:get(id, Args),
LeaseMs = maps:get(lease_ms, Args),
TopN = maps:get(top_n, Args),
ScanCap = maps:get(scan_cap, Args),
ChunkSize = maps:get(chunk, Args),
BudgetMs = maps:get(budget_ms, Args),
ModuleNames = maps:get(modules, Args),
Now = fun() -> erlang:monotonic_time(millisecond) end,
%% The owner changes when a new connection attaches: the session process
%% keeps it in its dictionary (put there first thing).
Send = fun(Msg) -> erlang:send(get(giulia_owner), Msg, [noconnect]) end,

%% On OTP 27+ the call_count patterns live in a trace session of our own
%% (trace:session_create/3), so that they never meet another tool's: chosen
%% when the release is 27 or later and the function exists (the `trace`
%% module is OTP's own, loaded from its kernel if it is not yet); `legacy`
%% otherwise (OTP 25 here: this path is untested on this machine). The
%% session process keeps the choice in its dictionary (giulia_cc); the
%% guardian gets it at its start.
CcSession = fun() ->
    Release = try list_to_integer(erlang:system_info(otp_release)) catch _:_ -> 0 end,
    case Release >= 27 andalso code:ensure_loaded(trace) =:= {module, trace} andalso
         erlang:function_exported(trace, session_create, 3) of
        true -> try trace:session_create(giulia_count, self(), []) catch _:_ -> legacy end;
        false -> legacy
    end
end,
Cc = fun() -> case get(giulia_cc) of undefined -> legacy; TS -> TS end end,
CcPattern = fun(M, How) ->
    case Cc() of
        legacy -> erlang:trace_pattern({M, '_', '_'}, How, [call_count]);
        TS -> trace:function(TS, {M, '_', '_'}, How, [call_count])
    end
end,
%% call_count of every function in MFAs, as trace_info answers it
CcInfo = fun(MFAs) ->
    N = length(MFAs),
    case Cc() of
        legacy -> lists:zipwith(fun erlang:trace_info/2, MFAs, lists:duplicate(N, call_count));
        TS -> lists:zipwith3(fun trace:info/3, lists:duplicate(N, TS), MFAs,
                             lists:duplicate(N, call_count))
    end
end,
ClearPatterns = fun(legacy, Mods) ->
                       [catch erlang:trace_pattern({M, '_', '_'}, false, [call_count]) || M <- Mods],
                       ok;
                   (TS, _Mods) -> catch trace:session_destroy(TS), ok
                end,

%% Module names from the user: existing atoms only, loaded modules only, and
%% no call_count pattern already set by someone else (clearing ours at the
%% end would clear theirs: the module is refused, and the error says so).
%% Other tools' patterns on the same functions (dbg's or recon_trace's call
%% trace, meta trace, call_time) are shared: call_count is a breakpoint of
%% its own kind, set and cleared without touching theirs (checked on OTP 25
%% with dbg:tpl, and dbg:ctp leaves ours), and the start reply and every
%% snapshot say what was there.
FunctionsOf = fun(M) ->
    [{M, F, A} || {F, A} <- M:module_info(functions)]
end,
%% What others hold on a module's functions: [{Kind, Functions, Holder}].
ForeignOn = fun(MFAs) ->
    Alls = lists:zipwith(fun erlang:trace_info/2, MFAs, lists:duplicate(length(MFAs), all)),
    Kinds = lists:append([[{K, Who} || {K, V} <- L,
                                       Who <- [case {K, V} of
                                                   {traced, global} -> global;
                                                   {traced, local} -> local;
                                                   {meta, P} when P =/= false -> P;
                                                   {call_count, N} when N =/= false -> set;
                                                   {call_time, T} when T =/= false -> set;
                                                   _ -> none
                                               end], Who =/= none]
                          || {all, L} <- Alls, is_list(L)]),
    [{K, N, W} || {{K, W}, N} <- maps:to_list(
                      lists:foldl(fun(E, Acc) -> maps:update_with(E, fun(X) -> X + 1 end, 1, Acc) end,
                                  #{}, Kinds))]
end,
%% A tracer (pid, port or tracer module) as an operator can find it.
Holder = fun(P) when is_pid(P) ->
                case erlang:process_info(P, [registered_name, current_function]) of
                    [{registered_name, Name}, _] when is_atom(Name) ->
                        io_lib:format("~p (~s)", [P, Name]);
                    [_, {current_function, {Mo, F, A}}] ->
                        io_lib:format("~p (in ~s:~s/~b)", [P, Mo, F, A]);
                    _ -> io_lib:format("~p", [P])
                end;
            (P) when is_port(P) -> io_lib:format("port ~p", [P]);
            ({Mo, _}) when is_atom(Mo) -> io_lib:format("tracer module ~s", [Mo]);
            (Other) -> io_lib:format("~p", [Other])
         end,
KindText = fun(traced, local) -> "call trace patterns (local)";
              (traced, global) -> "call trace patterns (global)";
              (meta, P) -> ["meta trace patterns for ", Holder(P)];
              (call_count, _) -> "call_count patterns";
              (call_time, _) -> "call_time patterns"
           end,
CheckModule = fun({Name, Candidates}) ->
    Existing = lists:append([try [erlang:binary_to_existing_atom(C, utf8)]
                             catch error:badarg -> [] end || C <- Candidates]),
    case [M || M <- Existing, erlang:module_loaded(M)] of
        [] -> {error, <<"module ", Name/binary, " is not loaded">>};
        [M | _] ->
            MFAs = FunctionsOf(M),
            Foreign = ForeignOn(MFAs),
            Notes = [iolist_to_binary(io_lib:format(
                         "~s: ~s set by another tool on ~b of ~b functions; shared (left as they are)",
                         [Name, KindText(K, W), N, length(MFAs)]))
                     || {K, N, W} <- lists:sort(Foreign), K =/= call_count orelse Cc() =/= legacy],
            case [N || {call_count, N, _} <- Foreign, Cc() =:= legacy] of
                [] -> {ok, M, MFAs, Notes};
                [N | _] -> {error, iolist_to_binary(io_lib:format(
                                "module ~s already has call_count patterns set by another tool "
                                "(on ~b of ~b functions): not traced, as clearing ours would "
                                "clear them", [Name, N, length(MFAs)]))}
            end
    end
end,
%% Process tracers already in place (dbg:p, recon_trace, an APM agent): who
%% traces how many processes (at most ScanCap looked at), new processes, the
%% seq_trace system tracer, a system monitor or profiler. Giulia shares with
%% all of them: it sets no process flag on a process another tracer holds
%% (call_time refuses such processes) and never changes theirs.
ForeignTracers = fun() ->
    Pids = lists:sublist(erlang:processes(), ScanCap),
    Tracers = lists:zipwith(fun erlang:trace_info/2, Pids, lists:duplicate(length(Pids), tracer)),
    Me = self(),
    ByTracer = lists:foldl(fun({tracer, TP}, Acc) when TP =/= [], TP =/= Me ->
                                   maps:update_with(TP, fun(X) -> X + 1 end, 1, Acc);
                              (_, Acc) -> Acc
                           end, #{}, Tracers),
    Procs = [iolist_to_binary(io_lib:format(
                 "processes: ~b traced by ~s (another tool's process trace flags); shared",
                 [NP, Holder(TP)])) || {TP, NP} <- lists:sort(maps:to_list(ByTracer))],
    New = case catch erlang:trace_info(new, tracer) of
              {tracer, NT} when NT =/= [] ->
                  [iolist_to_binary(["processes: new processes are traced by ", Holder(NT)])];
              _ -> []
          end,
    Seq = case catch seq_trace:get_system_tracer() of
              ST when is_pid(ST); is_port(ST); is_tuple(ST) ->
                  [iolist_to_binary(["seq_trace: the system tracer is ", Holder(ST)])];
              _ -> []
          end,
    Mon = case catch erlang:system_monitor() of
              {MT, _} when is_pid(MT) -> [iolist_to_binary(["system_monitor: held by ", Holder(MT)])];
              _ -> []
          end,
    Prof = case catch erlang:system_profile() of
               {PT, _} when is_pid(PT); is_port(PT) ->
                   [iolist_to_binary(["system_profile: held by ", Holder(PT)])];
               _ -> []
           end,
    Procs ++ New ++ Seq ++ Mon ++ Prof
end,

%% Sorting helper: a list of {Value, Pid}, largest first, at most Wide.
Wide = max(50, 5 * TopN),
TopWide = fun(L) -> lists:sublist(lists:reverse(lists:sort(L)), Wide) end,
%% The reductions list keeps enough entries for the sampler's candidates and
%% the call_time set too, and a few more: other observers' processes found
%% among them are taken out of the lists (see Detail).
TopRN = max(TopN, min(50, max(0, maps:get(sample_k, Args, 0)))) + 8,

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
MsPositive = MsCompile([{{'$1', '_'}, [{'>', '$1', 0}], ['$_']}]),
MsQueue = MsCompile([{{{message_queue_len, '$1'}, '$2'}, [{'>', '$1', 0}], [{{'$1', '$2'}}]}]),
MsHeap = MsCompile([{{{heap_size, '$1'}, '$2'}, [], [{{'$1', '$2'}}]}]),
MsSwap = MsCompile([{{'$1', '$2'}, [], [{{'$2', '$1'}}]}]),
PiAll = fun(Pids, Item) ->
    lists:zipwith(fun erlang:process_info/2, Pids, lists:duplicate(length(Pids), Item))
end,
%% The items' list for a chunk, made once: a shorter chunk takes a tail.
ChunkReds = lists:duplicate(ChunkSize, reductions),
%% Reductions of a chunk (a process that died: -1).
ScanChunk = fun(Chunk, Len) ->
    MsRun(lists:zipwith(fun erlang:process_info/2, Chunk,
                        lists:nthtail(ChunkSize - Len, ChunkReds)), MsReds)
end,
%% {ScannedPids, Reductions, Partial}
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
%% ({PrevPids, PrevReductions}); a process born since counts from 0.
Ran = fun(Pids, Reds, {PrevPids, PrevReds}) ->
    Before = case Pids =:= PrevPids of
                 true -> PrevReds;
                 false ->
                     N = length(Pids),
                     PrevMap = maps:from_list(lists:zip(PrevPids, PrevReds)),
                     lists:zipwith3(fun maps:get/3, Pids, lists:duplicate(N, PrevMap),
                                    lists:duplicate(N, 0))
             end,
    MsRun(lists:zip(lists:zipwith(fun erlang:'-'/2, Reds, Before), Pids), MsPositive)
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
    Cache = lists:foldl(fun(P, C) -> C#{P => StaticOf(P)} end, Cache0,
                        MsRun(lists:zip(Pids, Known), MsMiss)),
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
EtsTop = fun() ->
    Tabs = lists:sublist(ets:all(), 100000),
    Mems = lists:zipwith(fun ets:info/2, Tabs, lists:duplicate(length(Tabs), memory)),
    Biggest = lists:sublist(lists:reverse(lists:sort(
                  proplists:delete(undefined, lists:zip(Mems, Tabs)))), 5),
    lists:append([case catch {ets:info(T, name), ets:info(T, size), ets:info(T, owner)} of
                      {Name, Size, OwnerPid} when is_atom(Name), is_integer(Size) ->
                          OwnerMod = case catch erlang:process_info(OwnerPid, [registered_name, initial_call, current_function]) of
                                         [{registered_name, R}, {initial_call, I}, {current_function, C}] ->
                                             ModuleOf(R, element(1, DictOf(OwnerPid)), MFA(I), MFA(C));
                                         _ -> null
                                     end,
                          [#{name => atom_to_binary(Name, utf8),
                             id => EtsId(T),
                             owner_module => OwnerMod, size => Size,
                             memory_bytes => Words * WordSize}];
                      _ -> []
                  end || {Words, T} <- Biggest])
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

%% ---- Overhead budget: duty-cycled call counting ----
%% With `overhead` (a fraction of the node's work, e.g. 0.05) the call_count
%% patterns are set for part of every cycle and removed for the rest, so that
%% a call costs nothing while they are off. Measured on OTP 25 (BENCHMARKS.md
%% "Overhead budget"), three facts shape the design:
%% - setting and clearing a pattern waits for every scheduler to pass a safe
%%   point (milliseconds, tens of them on a loaded machine), and the module
%%   counts during part of that wait: the barriers cost as much as the time
%%   on, and where in them counting starts is unknown. So the counted
%%   interval is bounded by two plain reads of the counters (no pause, which
%%   is a barrier too): one after the set has returned, one before the clear;
%%   and the whole span from the set's start to the clear's end is the
%%   module's exposure, which is what the budget pays for.
%% - a counted call is slower (on tiny functions 25 times): the calls seen
%%   per second while on are not the calls per second while off. The
%%   reductions a call path takes are the same traced or not, so the
%%   estimate scales by work, not time: calls counted / the node's
%%   reductions in the counted intervals × the node's reductions in the
%%   window (the session's own reductions left out of both).
%% - barriers are long, so cycles are long: the cycle is chosen so that the
%%   barriers take at most half of each module's exposure, between the
%%   configured cycle and the snapshot interval.
%% Per cycle and function the session keeps the count's sum and sum of
%% squares (the C node turns them into an estimate with its interval), per
%% module the time counted, the reductions counted, the exposure and the
%% cycles. The fractions are adapted at every snapshot from the measured
%% cost: the node's reductions per scheduler-busy time while every traced
%% module counts against while none is set (the same interval), smoothed;
%% each module gets an equal part of the budget, so that a module taking
%% most of the calls gets a smaller fraction. Above PauseAbove scheduler
%% utilisation over an interval counting pauses entirely for the next one
%% (the snapshot says so).
Overhead = case maps:get(overhead, Args, 0) of
               OverheadArg when is_number(OverheadArg), OverheadArg > 0, OverheadArg < 1 ->
                   OverheadArg;
               _ -> 0
           end,
PauseAbove = case maps:get(pause_above, Args, 0) of
                 PauseArg when is_number(PauseArg), PauseArg > 0 -> PauseArg;
                 _ -> 2.0
             end,
%% A cycle is at least duty_cycle_ms (at most the snapshot interval) and at
%% most 60 s or 30 intervals: where the barriers are long (a loaded machine:
%% hundreds of milliseconds) a cycle spans several windows, and a window in
%% which a module did not count carries its last counted calls per
%% reduction over (the snapshot marks it `carried`).
DutyWindowUs = 1000 * max(20, maps:get(interval_ms, Args, 1000)),
DutyCycleMinUs = 1000 * max(20, min(DutyWindowUs div 1000, maps:get(duty_cycle_ms, Args, 1000))),
DutyCycleMaxUs = max(DutyWindowUs, min(60000000, 30 * DutyWindowUs)),
DutyMax = 0.9,
DutyMinOnUs = 1000,
NowUs = fun() -> erlang:monotonic_time(microsecond) end,
Online0 = erlang:system_info(schedulers_online),
SchedBusy = fun() ->
    case erlang:statistics(scheduler_wall_time) of
        undefined -> 0;
        L -> lists:sum([A || {I, A, _} <- L, I =< Online0])
    end
end,
%% The node's reductions, exactly (the running processes' too: a counted
%% interval is shorter than a time slice of a loaded node), without the
%% session process's own (erl_eval steps are reductions too).
WorkReds = fun() ->
    {R, _} = erlang:statistics(exact_reductions),
    {reductions, Own} = erlang:process_info(self(), reductions),
    R - Own
end,
%% The segment since the last mark goes to `full` (every counted module
%% counting), `off` (none set) or nowhere (`partial`: some set, or a barrier
%% inside it); only full and off segments measure the cost.
DutyMarkAs = fun(S, Class) ->
    Reds = WorkReds(),
    B = SchedBusy(),
    {R0, B0} = maps:get(d_mark, S),
    Seg = maps:get(d_seg, S),
    Seg2 = case maps:find(Class, Seg) of
               {ok, {AR, AB}} -> Seg#{Class => {AR + Reds - R0, AB + B - B0}};
               error -> Seg
           end,
    S#{d_mark => {Reds, B}, d_seg => Seg2}
end,
DutyMark = fun(S) ->
    On = map_size(maps:get(d_onset, S)),
    Counted = length([F || F <- maps:values(maps:get(d_fracs, S)), F > 0]),
    DutyMarkAs(S, if On =:= 0 -> off;
                     On =:= Counted -> full;
                     true -> partial
                  end)
end,
%% Etiquette under the budget: while our patterns are off, another tool
%% (a second observer, cprof) may set call_count on a module we count; and
%% while they are on, it may restart the counters (the patterns are one
%% breakpoint, shared). Either way we back off that module for the rest of
%% the session, leave its patterns to the other tool (never set, never
%% cleared by us again, the guardian told), and say so.
MsHeld = MsCompile([{{call_count, '$1'}, [{'=/=', '$1', false}], [true]}]),
DutyHeld = fun(MFAs) -> MsRun(CcInfo(MFAs), MsHeld) =/= [] end,
DutyBackOff = fun(S, M, Why) ->
    case maps:get(guardian, S) of
        undefined -> ok;
        G -> G ! {giulia_guardian, drop, M}
    end,
    Note = iolist_to_binary(io_lib:format(
               "call counting of ~s stopped: another tool ~s; its patterns are left to it",
               [M, Why])),
    S#{d_fracs => (maps:get(d_fracs, S))#{M => 0},
       d_backoff => [M | maps:get(d_backoff, S, [])],
       d_notes => maps:get(d_notes, S, []) ++ [Note],
       d_pending => lists:keydelete(M, 2, maps:get(d_pending, S, []))}
end,
%% The counters as they are (a plain read, no barrier).
DutyRead = fun(_M, MFAs) ->
    Counts = CcInfo(MFAs),
    [case C of {call_count, N} when is_integer(N) -> N; _ -> 0 end || C <- Counts]
end,
%% The start of a counted interval of M:
%% {Time, {Reductions, SchedulerBusy}, Counts, ExposedSince}.
DutyOpen = fun(M, S, Since) ->
    Counts = DutyRead(M, maps:get(M, maps:get(d_mfas, S))),
    {NowUs(), {WorkReds(), SchedBusy()}, Counts, Since}
end,
%% The end of M's counted interval, added to the window's sums (the
%% exposure is added apart: it ends when the clear has).
DutyClose = fun(S, M) ->
    {TA, {RA, BA}, CA, Since} = maps:get(M, maps:get(d_onset, S)),
    CB = DutyRead(M, maps:get(M, maps:get(d_mfas, S))),
    RB = WorkReds(),
    BB = SchedBusy(),
    TB = NowUs(),
    Ns = lists:zipwith(fun(B, A) -> max(0, B - A) end, CB, CA),
    Acc = maps:get(d_acc, S),
    {OnUs, OnReds, ExpUs, Cycles, Sums} = maps:get(M, Acc),
    Sums2 = lists:zipwith(fun(N, {Su, Sq}) -> {Su + N, Sq + N * N} end, Ns, Sums),
    S#{d_acc => Acc#{M => {OnUs + max(0, TB - TA), OnReds + max(0, RB - RA), ExpUs,
                            Cycles + 1, Sums2}},
       d_onbusy => (maps:get(d_onbusy, S))#{M => maps:get(M, maps:get(d_onbusy, S), 0) + max(0, BB - BA)},
       d_onset => (maps:get(d_onset, S))#{M => {TB, {RB, BB}, CB, Since}}}
end,
DutyExpose = fun(S, M, Us) ->
    Acc = maps:get(d_acc, S),
    {OnUs, OnReds, ExpUs, Cycles, Sums} = maps:get(M, Acc),
    S#{d_acc => Acc#{M => {OnUs, OnReds, ExpUs + max(0, Us), Cycles, Sums}}}
end,
%% A module's barriers per cycle (its set and its clear), smoothed.
DutyBarrier = fun(S, M, Us) ->
    {BN, BUs} = maps:get(d_barrier, S),
    Old = maps:get(M, maps:get(d_bar, S), Us),
    S#{d_barrier => {BN + 1, BUs + Us},
       d_bar => (maps:get(d_bar, S))#{M => round(0.5 * Old + 0.5 * Us)}}
end,
%% M's time: read, then clear (the counters go with the pattern), and push
%% the next cycle back when this exposure ran past what the cycle allows (a
%% slow barrier, a late timer), so that the exposure keeps to its fraction.
DutyOffClear = fun(S, M) ->
    S1 = DutyClose(DutyMark(S), M),
    {_, _, _, Since} = maps:get(M, maps:get(d_onset, S1)),
    T0 = NowUs(),
    catch CcPattern(M, false),
    T1 = NowUs(),
    S2 = DutyBarrier(DutyExpose(S1#{o_waited_us => maps:get(o_waited_us, S1, 0) + (T1 - T0)},
                                M, T1 - Since), M,
                     (T1 - T0) + maps:get(M, maps:get(d_setus, S1), 0)),
    Cycle = maps:get(d_cycle_us, S2),
    Allowed = maps:get(M, maps:get(d_fracs, S2)) * Cycle + maps:get(M, maps:get(d_bar, S2), 0),
    Exposed = T1 - Since,
    Next = case Allowed > 0 andalso Exposed > Allowed of
               true -> min(maps:get(d_c0, S2) + DutyCycleMaxUs,
                           max(maps:get(d_next_c0, S2), Since + round(Cycle * Exposed / Allowed)));
               false -> maps:get(d_next_c0, S2)
           end,
    DutyMarkAs(S2#{d_onset => maps:remove(M, maps:get(d_onset, S2)), d_next_c0 => Next}, partial)
end,
DutyOff = fun(S, M) ->
    {_, _, CountsA, _} = maps:get(M, maps:get(d_onset, S)),
    CountsB = DutyRead(M, maps:get(M, maps:get(d_mfas, S))),
    case Cc() =:= legacy andalso lists:member(true, lists:zipwith(fun erlang:'<'/2,
                                                                 CountsB, CountsA)) of
        true ->
            %% restarted under us: not cleared (it is the other tool's now)
            DutyBackOff(S#{d_onset => maps:remove(M, maps:get(d_onset, S))}, M,
                        "restarted its call counters");
        false -> DutyOffClear(S, M)
    end
end,
%% A cycle: every module with a fraction is set, and its counted interval
%% opens when its set has returned; it closes after its fraction of the cycle.
DutyCycle = fun(S) ->
    S0 = DutyMark(S),
    Candidates = [M || {M, F} <- maps:to_list(maps:get(d_fracs, S0)), F > 0,
                       not maps:is_key(M, maps:get(d_onset, S0))],
    Taken = [M || M <- Candidates, Cc() =:= legacy,
                  DutyHeld(maps:get(M, maps:get(d_mfas, S0)))],
    S1 = lists:foldl(fun(M, SA) -> DutyBackOff(SA, M, "began counting its calls") end,
                     S0, Taken),
    Fracs = maps:get(d_fracs, S1),
    OnMods = [M || {M, F} <- maps:to_list(Fracs), F > 0,
                   not maps:is_key(M, maps:get(d_onset, S1))],
    C0 = NowUs(),
    Cycle = maps:get(d_cycle_us, S1),
    %% all set first, then all opened: a module's counted interval does not
    %% wait through the other modules' barriers
    SetUs = lists:foldl(fun(M, Acc) ->
                            TS = NowUs(),
                            CcPattern(M, true),
                            Acc#{M => NowUs() - TS}
                        end, #{}, OnMods),
    S2 = lists:foldl(fun(M, SA) ->
                         SA#{d_onset => (maps:get(d_onset, SA))#{M => DutyOpen(M, SA, C0)}}
                     end, S1#{d_setus => maps:merge(maps:get(d_setus, S1), SetUs),
                              o_waited_us => maps:get(o_waited_us, S1, 0) +
                                             lists:sum(maps:values(SetUs))}, OnMods),
    Pending = lists:keysort(1, [{element(1, maps:get(M, maps:get(d_onset, S2)))
                                 + max(DutyMinOnUs, round(maps:get(M, Fracs) * Cycle)), M}
                                || M <- OnMods]),
    S3 = case OnMods of [] -> S2; _ -> DutyMarkAs(S2, partial) end,
    S3#{d_pending => Pending, d_c0 => C0, d_next_c0 => C0 + Cycle}
end,
DutyStep = fun DutyStep(S) ->
    case maps:get(d_on, S, false) of
        false -> S;
        true ->
            T = NowUs(),
            case maps:get(d_pending, S) of
                [{At, M} | Rest] when At =< T -> DutyStep(DutyOff(S#{d_pending => Rest}, M));
                _ ->
                    case T >= maps:get(d_next_c0, S) andalso
                         map_size(maps:get(d_onset, S)) =:= 0 of
                        true -> DutyCycle(S);
                        false -> S
                    end
            end
    end
end,
%% Before a sample: every module counting now goes off. The scan runs at
%% normal priority and takes long on a loaded node (seconds were measured
%% here); a pattern left on through it would count far past its fraction.
DutyQuiet = fun(S) ->
    case maps:get(d_on, S, false) of
        false -> S;
        true -> lists:foldl(fun(M, SA) -> DutyOff(SA, M) end, S#{d_pending => []},
                            maps:keys(maps:get(d_onset, S)))
    end
end,
%% The next duty event, in monotonic milliseconds, or infinity.
DutyNext = fun(S) ->
    case maps:get(d_on, S, false) of
        false -> infinity;
        true ->
            C = maps:get(d_next_c0, S),
            Due = case maps:get(d_pending, S) of
                      [{At, _} | _] -> min(At, C);
                      [] -> C
                  end,
            erlang:convert_time_unit(Due, microsecond, millisecond) + 1
    end
end,
%% A new window: sums to zero, and the modules counting now open a new
%% counted interval (what they counted before is not this window's).
DutyZero = fun(S) ->
    Acc = maps:map(fun(_M, MFAs) -> {0, 0, 0, 0, [{0, 0} || _ <- MFAs]} end, maps:get(d_mfas, S)),
    T = NowUs(),
    Onset = maps:map(fun(M, _) -> DutyOpen(M, S, T) end, maps:get(d_onset, S)),
    S#{d_acc => Acc, d_seg => #{full => {0, 0}, off => {0, 0}}, d_mark => {WorkReds(), SchedBusy()},
       d_barrier => {0, 0}, d_onset => Onset, d_win0 => WorkReds(), d_onbusy => #{},
       d_win0b => SchedBusy()}
end,
DutyInit = fun(S, Traced) ->
    case Overhead > 0 andalso Traced =/= [] of
        false -> S#{d_on => false};
        true ->
            Mods = [M || {M, _} <- Traced],
            F0 = max(0.0, min(DutyMax, Overhead / length(Mods))),
            %% every module was set on at the start: it counts from now
            %% for its fraction of a first cycle as short as allowed
            S1 = DutyZero(S#{d_on => true, d_mfas => maps:from_list(Traced),
                             d_fracs => maps:from_list([{M, F0} || M <- Mods]),
                             d_cost => 1.0, d_onset => maps:from_list([{M, x} || M <- Mods]),
                             d_setus => #{}, d_bar => #{}, d_cycle_us => DutyCycleMinUs,
                             d_mark => {0, 0}}),
            T = NowUs(),
            S1#{d_pending => lists:keysort(1, [{T + max(DutyMinOnUs, round(F0 * DutyCycleMinUs)), M}
                                               || M <- Mods]),
                d_c0 => T, d_next_c0 => T + DutyCycleMinUs}
    end
end,
%% The snapshot's duty figures, and the fractions and the cycle for the next
%% interval. A module's target exposure is its part of the budget over its
%% part of the cost (Cost × Share: Share its calls per reduction among the
%% modules'); the cycle is long enough for its barriers to take at most half
%% of that; what is left of the exposure is counted.
DutySnapshot = fun(S, Util) ->
    S0 = DutyMark(S),
    %% modules counting now: their counts so far, and they go on counting
    %% (their exposure so far is this window's)
    T = NowUs(),
    S1 = lists:foldl(fun(M, SA) ->
                         {_, _, _, Since} = maps:get(M, maps:get(d_onset, SA)),
                         SB = DutyExpose(DutyClose(SA, M), M, T - Since),
                         {TB, RB, CB, _} = maps:get(M, maps:get(d_onset, SB)),
                         SB#{d_onset => (maps:get(d_onset, SB))#{M => {TB, RB, CB, T}}}
                     end, S0, maps:keys(maps:get(d_onset, S0))),
    WindowReds = max(0, WorkReds() - maps:get(d_win0, S1)),
    WindowBusy = max(0, SchedBusy() - maps:get(d_win0b, S1)),
    OnBusy = maps:get(d_onbusy, S1),
    %% a module that did not count in this window (its cycle is longer)
    %% carries its last counted calls and reductions over; one that counted
    %% is remembered for the windows to come
    Acc0 = maps:get(d_acc, S1),
    Last = maps:merge(maps:get(d_last, S1, #{}),
                      maps:filter(fun(_, {_, OnR, _, Cy, _}) -> Cy > 0 andalso OnR > 0 end, Acc0)),
    Carried = [M || {M, {_, _, _, 0, _}} <- maps:to_list(Acc0), maps:is_key(M, Last),
                    not maps:is_key(M, maps:get(d_onset, S1))],
    Acc = maps:merge(Acc0, maps:from_list([{M, begin
                                                   {_, OnR, _, Cy, Su} = maps:get(M, Last),
                                                   {0, OnR, element(3, maps:get(M, Acc0)), Cy, Su}
                                               end} || M <- Carried])),
    Mfas = maps:get(d_mfas, S1),
    Fracs = maps:get(d_fracs, S1),
    Bars = maps:get(d_bar, S1),
    Cycle = maps:get(d_cycle_us, S1),
    Calls = lists:append([[{Mo, F, A, Su, Sq, Cyc}
                           || {{Mo, F, A}, {Su, Sq}} <- lists:zip(maps:get(M, Mfas), Sums), Su > 0]
                          || {M, {_, _, _, Cyc, Sums}} <- maps:to_list(Acc)]),
    #{full := {RF, BF}, off := {RO, BO}} = maps:get(d_seg, S1),
    Measured = if BF > 0, BO > 0, RO > 0, RF > 0 ->
                      max(0.0, min(1.0, 1 - (RF / BF) / (RO / BO)));
                  true -> null
               end,
    Cost = case Measured of
               null -> maps:get(d_cost, S1);
               _ -> 0.5 * maps:get(d_cost, S1) + 0.5 * Measured
           end,
    Paused = is_number(Util) andalso Util > PauseAbove,
    Rates = [{M, lists:sum([Su || {Su, _} <- Sums]) / max(1, OnReds)}
             || {M, {_, OnReds, _, _, Sums}} <- maps:to_list(Acc)],
    Total = lists:sum([R || {_, R} <- Rates]),
    NHot = max(1, length([R || {_, R} <- Rates, R > 0])),
    %% the overhead asked for, or less: what the guest's budget leaves
    Allowed = maps:get(d_overhead, S1, Overhead),
    Exposure = maps:from_list(
                 [{M, if Cost =< 0 -> DutyMax;
                         Total > 0, R > 0 -> min(DutyMax, Allowed / (NHot * Cost * (R / Total)));
                         true -> min(DutyMax, Allowed / (NHot * Cost))
                      end} || {M, R} <- Rates]),
    %% every module is set before any counts, and each waits through the
    %% others' barriers: a module's exposure holds all of them
    BarAll = lists:sum(maps:values(Bars)),
    NextCycle = max(DutyCycleMinUs,
                    min(DutyCycleMaxUs,
                        lists:max([0 | [round(2 * BarAll / X)
                                        || {_, X} <- maps:to_list(Exposure), X > 0]]))),
    Backoff = maps:get(d_backoff, S1, []),
    NewFracs = maps:from_list(
                 [{M, case Paused orelse lists:member(M, Backoff) of
                          true -> 0;
                          false -> max(DutyMinOnUs / NextCycle, X - BarAll / NextCycle)
                      end} || {M, X} <- maps:to_list(Exposure)]),
    Section = #{overhead => Overhead, allowed => Allowed, cycle_ms => Cycle / 1000, next_cycle_ms => NextCycle / 1000,
                cost => Cost, cost_measured => Measured, paused => Paused,
                pause_above => if PauseAbove > 1 -> null; true -> PauseAbove end,
                utilisation => Util, reds => WindowReds, busy => WindowBusy,
                barrier_us => case maps:get(d_barrier, S1) of
                                  {0, _} -> null;
                                  {BN, BUs} -> BUs div BN
                              end,
                modules => [#{module => M, on_us => OnUs, on_reds => OnReds, exposed_us => ExpUs,
                              on_busy => case lists:member(M, Carried) of
                                             true -> 0;
                                             false -> maps:get(M, OnBusy, 0)
                                         end,
                              %% a carried window's calls per counted second
                              %% come from the last window that counted
                              carried_on_us => case lists:member(M, Carried) of
                                                   true -> element(1, maps:get(M, Last));
                                                   false -> 0
                                               end,
                              cycles => Cyc, carried => lists:member(M, Carried),
                              fraction => maps:get(M, Fracs),
                              next_fraction => maps:get(M, NewFracs),
                              barrier_us => maps:get(M, Bars, null)}
                            || {M, {OnUs, OnReds, ExpUs, Cyc, _}} <- maps:to_list(Acc)]},
    {Calls, Section, DutyZero(S1#{d_cost => Cost, d_fracs => NewFracs, d_cycle_us => NextCycle,
                                  d_last => Last})}
end,

%% ---- Sampler: where the busiest processes execute, between snapshots ----
%% Every SamplePeriod ms the session process reads `status` and
%% `current_function` of its candidates (the top SampleK processes by
%% reductions over the last interval; at the baseline, by lifetime
%% reductions) and, for the first SampleStackK of them that are executing, a
%% `current_stacktrace` cut to SampleDepth frames. A process is executing when
%% its status is running, runnable or garbage_collecting; other samples count
%% as waiting. Samples are kept as one list per tick and folded into counts
%% ({Pid, Frames} -> N, at most SampleKeysCap keys, the rest counted as
%% dropped) every SampleFoldAt entries and at the snapshot. At the snapshot
%% each process's reductions over the interval are spread over its executing
%% samples, so that a stack's `reductions` estimates CPU, not presence; a
%% sampled process that exited before the snapshot is weighted by the mean
%% reductions per executing sample of the others. Where each module's object
%% code lives (OTP root, Elixir's lib dir, preloaded, other) is looked up once
%% per session per module seen, at most SampleOriginsCap modules. The work of
%% a tick is bounded by SampleK process_info calls plus SampleStackK stacks of
%% executing candidates and one stack per blocked candidate (SampleBlocked).
SamplePeriod = case maps:get(sample_period_ms, Args, 0) of
                   PeriodArg when is_integer(PeriodArg), PeriodArg > 0 ->
                       max(5, min(1000, PeriodArg));
                   _ -> 0
               end,
SampleK = max(1, min(50, maps:get(sample_k, Args, 10))),
SampleStackK = max(0, min(SampleK, maps:get(sample_stack_k, Args, 5))),
SampleDepth = max(1, min(32, maps:get(sample_depth, Args, 8))),
SampleKeysCap = 2000,
SampleFoldAt = 1000,
SampleStacksOut = 200,
SampleOriginsCap = 5000,
%% A tick's per-candidate steps run in match specifications (compiled once):
%% {Pid, [{status, St}, {current_function, CF}]} becomes {Pid, exec, CF} for
%% an executing candidate, {Pid, blocked, CF} for one waiting in gen:do_call/4,
%% {Pid, waiting} otherwise; an exited candidate (undefined) is dropped.
MsTick = MsCompile([{{'$1', [{status, '$2'}, {current_function, '$3'}]},
                     [{'orelse', {'=:=', '$2', running}, {'=:=', '$2', runnable},
                       {'=:=', '$2', garbage_collecting}}],
                     [{{'$1', exec, '$3'}}]},
                    {{'$1', [{status, '_'}, {current_function, {gen, do_call, 4}}]}, [],
                     [{{'$1', blocked, {{gen, do_call, 4}}}}]},
                    {{'$1', [{status, '_'}, '_']}, [], [{{'$1', waiting}}]}]),
MsExecPid = MsCompile([{{'$1', exec, '_'}, [], ['$1']}]),
%% a waiting candidate's current function (where it receives): {Pid, CF}
MsWaitAt = MsCompile([{{'$1', [{status, '$2'}, {current_function, '$3'}]},
                       [{'andalso', {'=/=', '$2', running}, {'=/=', '$2', runnable},
                         {'=/=', '$2', garbage_collecting}}],
                       [{{'$1', '$3'}}]}]),
MsBlockedPid = MsCompile([{{'$1', blocked, '_'}, [], ['$1']}]),
%% an executing candidate without a stack read: {Pid, [CF]}; a waiting one:
%% {Pid, {waiting, []}}
MsPlain = MsCompile([{{'$1', exec, '$2'}, [{is_tuple, '$2'}], [{{'$1', ['$2']}}]},
                     {{'$1', waiting}, [], [{{'$1', {{waiting, []}}}}]}]),
%% a stack frame {M, F, Arity | Args, Location} -> {M, F, Arity}
MsFrame = MsCompile([{{'$1', '$2', '$3', '_'}, [{is_atom, '$1'}, {is_atom, '$2'}, {is_integer, '$3'}],
                      [{{'$1', '$2', '$3'}}]},
                     {{'$1', '$2', '$3', '_'}, [{is_atom, '$1'}, {is_atom, '$2'}, {is_list, '$3'}],
                      [{{'$1', '$2', {length, '$3'}}}]}]),
SampleStack = fun(P, Current) ->
    Frames = case erlang:process_info(P, current_stacktrace) of
                 {current_stacktrace, Tr} -> MsRun(lists:sublist(Tr, SampleDepth), MsFrame);
                 _ -> []
             end,
    case {Current, Frames} of
        {null, _} -> Frames;
        {_, [Current | _]} -> Frames;
        _ -> lists:sublist([Current | Frames], SampleDepth)
    end
end,
%% Where an executing candidate runs, from its scheduling events: a
%% process_info/2 signal is answered when the process handles it, which for
%% a server is at its next receive, so a server busy between receives reads
%% as its receive loop. For the first SampleStackK executing candidates of a
%% tick whose current function, as read, is where they were seen waiting at
%% a tick of the interval (elsewhere, where it was preempted, the read
%% stands), none held by another tracer, the session turns on the `running`
%% trace flag with itself as the tracer for SampleRunMs, collects the
%% in/out events (at most SampleRunCap), turns the flag off and drains what
%% is left. Each slice's time (in to out; a process running when the flag
%% was set, from then) goes to the function the process was in when it went
%% out: where it was preempted, that is where its
%% reductions ran. One location per process per tick is drawn at random in
%% proportion to those times (an unbiased sample of where it ran). The flag
%% is never left on: it is removed before the tick returns, and the runtime
%% drops a flag whose tracer has died.
SampleRunMs = case maps:get(sample_run_ms, Args, 2) of
                  RunArg when is_integer(RunArg), RunArg >= 0 -> min(50, RunArg);
                  _ -> 2
              end,
SampleRunCap = 16,
SampleRunOn = fun(Pids) ->
    Me = self(),
    [P || P <- Pids,
          case erlang:trace_info(P, tracer) of
              {tracer, []} -> true;
              {tracer, Me} -> true;
              _ -> false
          end,
          (try erlang:trace(P, true, [running, monotonic_timestamp, {tracer, Me}])
           catch _:_ -> 0 end) =:= 1]
end,
SampleRunCollect = fun Collect(Deadline, N, Acc) ->
    Left = Deadline - erlang:monotonic_time(microsecond),
    case N >= SampleRunCap orelse Left =< 0 of
        true -> Acc;
        false ->
            receive
                {trace_ts, P, Ev, Where, T} when Ev =:= in; Ev =:= out; Ev =:= in_exiting;
                                                 Ev =:= out_exiting; Ev =:= out_exited ->
                    Collect(Deadline, N + 1, [{P, Ev, Where, T} | Acc])
            after Left div 1000 + 1 -> Acc
            end
    end
end,
SampleRunDrain = fun Drain(Acc) ->
    receive
        {trace_ts, P, Ev, Where, T} when Ev =:= in; Ev =:= out; Ev =:= in_exiting;
                                         Ev =:= out_exiting; Ev =:= out_exited ->
            Drain([{P, Ev, Where, T} | Acc])
    after 0 -> Acc
    end
end,
%% #{Pid => {M, F, A}}: one location per process that ran, from its events
%% in order; Ins0 says when the processes already running began (#{Pid =>
%% T}): a process with no `in` event seen before its `out` is else skipped.
SampleRunPick = fun(Events, Ins0) ->
    {_, Slices} = lists:foldl(
        fun({P, Ev, _, T}, {Ins, M}) when Ev =:= in; Ev =:= in_exiting -> {Ins#{P => T}, M};
           ({P, _, Where, T}, {Ins, M}) ->
                case maps:take(P, Ins) of
                    {T0, Ins2} when is_tuple(Where), T >= T0 ->
                        {Ins2, maps:update_with(P, fun(L) -> [{Where, T - T0} | L] end,
                                                [{Where, T - T0}], M)};
                    {_, Ins2} -> {Ins2, M};
                    error -> {Ins, M}
                end
        end, {Ins0, #{}}, Events),
    maps:fold(fun(P, L, Acc) ->
                  Total = lists:sum([D || {_, D} <- L]),
                  case Total > 0 of
                      false -> Acc;
                      true ->
                          Pick = rand:uniform() * Total,
                          {_, Where} = lists:foldl(
                              fun({W, D}, {Left, none}) when Left < D -> {0, W};
                                 ({_, D}, {Left, none}) -> {Left - D, none};
                                 (_, Done) -> Done
                              end, {Pick, none}, L),
                          case Where of
                              none -> Acc#{P => element(1, hd(L))};
                              _ -> Acc#{P => Where}
                          end
                  end
              end, #{}, Slices)
end,
%% #{Pid => {M, F, A}}: one location per traced candidate that ran.
SampleRun = fun(Pids) ->
    Start = erlang:monotonic_time(),
    On = SampleRunOn(Pids),
    Events0 = SampleRunCollect(erlang:monotonic_time(microsecond) + 1000 * SampleRunMs, 0, []),
    [catch erlang:trace(P, false, [running, monotonic_timestamp]) || P <- On],
    SampleRunPick(lists:reverse(SampleRunDrain(Events0)), maps:from_list([{P, Start} || P <- On]))
end,
%% Work in processes too short-lived to be candidates (a task per request, a
%% process per item: they are gone when the next snapshot picks candidates).
%% When the last interval's work done by processes that did not live to its
%% snapshot was a large share of the node's (s_born, set by SampleSnapshot),
%% ticks also sample the processes running now among the newborn, at most
%% one window per SampleBornEveryMs: the session spawns a sink (a process in
%% timer:sleep(infinity): compiled code that keeps what it is sent), sets the
%% `running` flag with the sink as tracer as the default of processes
%% spawned in the next SampleRunMs (new_processes, only when no other tool
%% holds that default), turns the default off, reads the sink's queue with
%% one process_info/2 and kills it: the newborns' flags then have a dead
%% tracer, which the runtime treats as none, so nothing is left and no event
%% reaches the session (an interpreted receive costs thousands of
%% reductions per event). A newborn's slice (in to out) goes to where it was
%% preempted, as for candidates; one that sent no `out` and still runs is
%% read like a candidate (its stack, answered at its next preemption). At
%% most SampleBornCap processes per window. Returns [{Pid, Frames}]; the
%% window's wait is left in the dictionary (giulia_born_wait, µs) for the
%% tick's cost to leave out.
SampleBornCap = 4,
SampleBornEveryMs = 100,
MsBornEvent = MsCompile([{{trace_ts, '$1', '$2', '$3', '$4'},
                          [{'orelse', {'=:=', '$2', in}, {'=:=', '$2', out}}],
                          [{{'$1', '$2', '$3', '$4'}}]}]),
SampleBorn = fun() ->
    case erlang:trace_info(new_processes, tracer) of
        {tracer, []} ->
            Sink = erlang:spawn(timer, sleep, [infinity]),
            _ = (catch erlang:trace(new_processes, true, [running, monotonic_timestamp, {tracer, Sink}])),
            Wait0 = erlang:monotonic_time(microsecond),
            receive after SampleRunMs -> ok end,
            put(giulia_born_wait, erlang:monotonic_time(microsecond) - Wait0),
            _ = (catch erlang:trace(new_processes, false, [running, monotonic_timestamp])),
            Events = case erlang:process_info(Sink, messages) of
                         {messages, Ms} -> MsRun(lists:sublist(Ms, 4 * SampleRunCap), MsBornEvent);
                         _ -> []
                     end,
            exit(Sink, kill),
            At = SampleRunPick(Events, #{}),
            Born = lists:sublist(lists:usort([P || {P, _, _, _} <- Events]), SampleBornCap),
            [{P, Fs} || P <- Born,
                        Fs <- [case maps:find(P, At) of
                                   {ok, Where} ->
                                       case SampleStack(P, null) of
                                           [Where | _] = Fs0 -> Fs0;
                                           Fs0 -> lists:sublist([Where | Fs0], SampleDepth)
                                       end;
                                   error ->
                                       case erlang:process_info(P, [status, current_function]) of
                                           [{status, St}, {current_function, CF}]
                                             when St =:= running; St =:= runnable;
                                                  St =:= garbage_collecting ->
                                               SampleStack(P, MFA(CF));
                                           _ -> []
                                       end
                               end],
                        Fs =/= []];
        _ -> []
    end
end,
SampleFold = fun(S) ->
    Groups = maps:groups_from_list(fun erlang:hd/1, lists:append(maps:get(s_raw, S))),
    {Counts, Dropped} = maps:fold(
        fun(K, V, {Acc, D}) ->
            C = length(V),
            case maps:is_key(K, Acc) orelse map_size(Acc) < SampleKeysCap of
                true -> {maps:update_with(K, fun(X) -> X + C end, C, Acc), D};
                false -> {Acc, D + C}
            end
        end, {maps:get(s_counts, S), maps:get(s_dropped, S)}, Groups),
    S#{s_raw => [], s_raw_n => 0, s_counts => Counts, s_dropped => Dropped}
end,
%% One tick: one process_info/2 per candidate, classified by MsTick; stacks
%% for the first SampleStackK executing candidates and every blocked one
%% (only these steps go through erl_eval, one per stack).
SampleTick = fun(S) ->
    Cands = maps:get(s_cands, S),
    Raw = lists:zip(Cands, lists:zipwith(fun erlang:process_info/2, Cands,
                                         maps:get(s_items, S))),
    C = MsRun(Raw, MsTick),
    Exec = lists:sublist(MsRun(C, MsExecPid), SampleStackK),
    %% a signal is answered away from the work only when the process
    %% reaches a receive: located by events are the executing candidates
    %% whose current function, as read, is where they were seen waiting
    %% at a tick of this interval; elsewhere (where it was preempted) the
    %% stack read is right and costs no events
    SeenWaiting = lists:foldl(fun({P, At}, M) ->
                                  maps:update_with(P, fun(L) -> lists:sublist(lists:usort([At | L]), 4) end,
                                                   [At], M)
                              end, maps:get(s_seen_waiting, S, #{}), MsRun(Raw, MsWaitAt)),
    %% answered where it waits: the read is the receive, not the work
    RunPids = [P || {P, exec, CF} <- C, lists:member(P, Exec),
                    lists:member(CF, maps:get(P, SeenWaiting, []))],
    W0 = erlang:monotonic_time(microsecond),
    RunAt = case SampleRunMs > 0 andalso RunPids =/= [] of
              true -> SampleRun(RunPids);
              false -> #{}
          end,
    %% the window's wait is no work of the session's
    Waited = case RunPids of
                 [] -> 0;
                 _ -> min(erlang:monotonic_time(microsecond) - W0, 1000 * SampleRunMs)
             end,
    %% a located process: where it ran, then its stack as read (where it
    %% answers: its own loop), so that a location in platform code still
    %% has the process's project frames behind it
    Stacked = [{P, case maps:find(P, RunAt) of
                       {ok, Where} ->
                           case SampleStack(P, MFA(CF)) of
                               [Where | _] = Fs -> Fs;
                               Fs -> lists:sublist([Where | Fs], SampleDepth)
                           end;
                       error -> SampleStack(P, MFA(CF))
                   end} || {P, exec, CF} <- C, lists:member(P, Exec)] ++
              [{P, {waiting, SampleStack(P, {gen, do_call, 4})}} || P <- MsRun(C, MsBlockedPid)],
    Plain = MsRun([E || {P, _, _} = E <- C, not lists:member(P, Exec)] ++
                  [E || {_, waiting} = E <- C], MsPlain),
    BornNow = SampleRunMs > 0 andalso maps:get(s_born, S, false) andalso
                  case maps:find(s_born_next, S) of
                      {ok, BornAt} -> Now() >= BornAt;
                      error -> true
                  end,
    Born = case BornNow of
               true -> SampleBorn();
               false -> []
           end,
    %% the window's wait is no work of the session's
    BornWaited = case BornNow of
                     true -> case erase(giulia_born_wait) of
                                 WaitUs when is_integer(WaitUs) -> WaitUs;
                                 _ -> 0
                             end;
                     false -> 0
                 end,
    Entries = [[E] || {_, Fs} = E <- Stacked ++ Born, Fs =/= []] ++ [[E] || E <- Plain],
    RawN = maps:get(s_raw_n, S) + length(Entries),
    S1 = S#{s_raw => [Entries | maps:get(s_raw, S)], s_raw_n => RawN,
            s_ticks => maps:get(s_ticks, S) + 1,
            s_run_waited => maps:get(s_run_waited, S, 0) + Waited + BornWaited,
            s_seen_waiting => SeenWaiting,
            s_born_pids => lists:foldl(fun({P, _}, M) -> M#{P => true} end,
                                       maps:get(s_born_pids, S, #{}), Born),
            s_born_next => case BornNow of
                               true -> Now() + SampleBornEveryMs;
                               false -> maps:get(s_born_next, S, Now())
                           end,
            s_run_located => maps:get(s_run_located, S, 0) + map_size(RunAt),
            s_born_located => maps:get(s_born_located, S, 0) + length(Born)},
    case RawN >= SampleFoldAt of
        true -> SampleFold(S1);
        false -> S1
    end
end,
%% Runs a tick when one is due and schedules the next one; a tick that fell
%% behind is not caught up (no burst after a long request).
SampleStep = fun(S) ->
    T = Now(),
    Next = maps:get(s_next, S),
    case is_integer(Next) andalso T >= Next of
        false -> S;
        true ->
            U0 = erlang:monotonic_time(microsecond),
            STicked = try SampleTick(S) catch _:_ -> S#{s_failed => maps:get(s_failed, S) + 1} end,
            Waited = maps:get(s_run_waited, STicked, 0) - maps:get(s_run_waited, S, 0),
            S1 = STicked#{s_tick_us => maps:get(s_tick_us, STicked, 0) +
                                  max(0, erlang:monotonic_time(microsecond) - U0 - Waited)},
            %% ticking for the newborns alone: no faster than their windows
            Period = case maps:get(s_cands, S1) of
                         [] -> max(maps:get(s_period, S1), SampleBornEveryMs);
                         _ -> maps:get(s_period, S1)
                     end,
            Due = Next + Period,
            S1#{s_next => if Due =< T -> T + Period; true -> Due end}
    end
end,
%% A new interval of the sampler with these candidates (none: no ticks).
SampleReset = fun(S, Cands0) ->
    Cands = lists:sublist(Cands0 -- maps:get(mine, S, [self()]), SampleK),
    Period = maps:get(s_period, S, SamplePeriod),
    S#{s_cands => Cands, s_items => lists:duplicate(length(Cands), [status, current_function]),
       s_raw => [], s_raw_n => 0, s_counts => #{}, s_dropped => 0, s_ticks => 0, s_failed => 0,
       s_tick_us => 0, s_period => Period, s_run_located => 0, s_born_located => 0,
       s_seen_waiting => maps:with(Cands, maps:get(s_seen_waiting, S, #{})),
       s_born_pids => #{},
       s_next => case {Period, Cands, maps:get(s_born, S, false)} of
                     {0, _, _} -> infinity;
                     {_, [], false} -> infinity;
                     _ -> Now() + Period
                 end}
end,
OtpRoot = code:root_dir() ++ "/",
ElixirLib = case code:lib_dir(elixir) of
                ElixirDir when is_list(ElixirDir) -> filename:dirname(ElixirDir) ++ "/";
                _ -> none
            end,
SampleOrigin = fun(M) ->
    %% Not loaded (a module known only for its BIFs, such as math): its
    %% object code is not looked for on the code path, which would scan it.
    File = case erlang:module_loaded(M) of
               true -> try code:which(M) catch _:_ -> unknown end;
               false -> unknown
           end,
    if File =:= preloaded -> <<"preloaded">>;
       not is_list(File) -> <<"unknown">>;
       true ->
           case {ElixirLib =/= none andalso lists:prefix(ElixirLib, File),
                 lists:prefix(OtpRoot, File)} of
               {true, _} -> <<"elixir">>;
               {_, true} -> <<"otp">>;
               _ -> <<"other">>
           end
    end
end,
SampleOrigins = fun(Mods, Known) ->
    lists:foldl(fun(M, K) ->
                    case maps:is_key(M, K) orelse map_size(K) >= SampleOriginsCap of
                        true -> K;
                        false -> K#{M => SampleOrigin(M)}
                    end
                end, Known, Mods)
end,
%% The sampler's section of a snapshot and the state for the next interval.
%% LiveDelta(P) is P's reductions over the interval, or dead; Dead is
%% {GoneReds, SampleBorn}: the interval's reductions of processes gone by
%% the snapshot (the node's work less that of the processes it has), and
%% whether the next interval samples newborns (SampleBorn above). A newborn's
%% samples, when it is gone too, share GoneReds (less the gone candidates'
%% share at the others' rate): their work is exactly what the processes
%% alive cannot account for, and the samples say where it ran.
SampleSnapshot = fun(S0, LiveDelta, NextCands, {GoneReds, BornNext}) ->
    S = S0#{s_born => BornNext},
    case {SamplePeriod, maps:get(s_ticks, S), maps:get(s_failed, S)} of
        {0, _, _} -> {#{}, S};
        {_, 0, 0} ->
            %% nothing sampled (an idle node has no candidates): the section
            %% says so without going through the folds
            {#{executing => #{period_ms => maps:get(s_period, S, SamplePeriod), ticks => 0,
                              candidates => length(maps:get(s_cands, S)),
                              stack_candidates => min(SampleStackK, length(maps:get(s_cands, S))),
                              depth => SampleDepth, samples => #{running => 0, waiting => 0},
                              reductions_sampled => 0, dropped => 0, failed_ticks => 0,
                              tick_us => 0, stacks => [], blocked => [], origins => []}},
             SampleReset(S, NextCands)};
        _ ->
            S1 = SampleFold(S),
            Counts = maps:to_list(maps:get(s_counts, S1)),
            Waiting = lists:sum([C || {{_, {waiting, _}}, C} <- Counts]),
            Running = [{P, Fs, C} || {{P, Fs}, C} <- Counts, is_list(Fs)],
            BlockedBy = lists:foldl(fun({{_, {waiting, [_ | _] = Fs}}, C}, M) ->
                                            maps:update_with(Fs, fun(X) -> X + C end, C, M);
                                       (_, M) -> M
                                    end, #{}, Counts),
            Blocked = lists:sublist(lists:reverse(lists:keysort(2, maps:to_list(BlockedBy))),
                                    SampleStacksOut),
            ExecOf = lists:foldl(fun({P, _, C}, M) ->
                                     maps:update_with(P, fun(X) -> X + C end, C, M)
                                 end, #{}, Running),
            Deltas = maps:map(fun(P, _) -> LiveDelta(P) end, ExecOf),
            Live = [{max(0, R), maps:get(P, ExecOf)} || {P, R} <- maps:to_list(Deltas),
                                                       R =/= dead],
            LiveReds = lists:sum([R || {R, _} <- Live]),
            LiveSamples = lists:sum([C || {_, C} <- Live]),
            PerSample = if LiveSamples > 0 -> LiveReds / LiveSamples; true -> 0 end,
            BornPids = maps:get(s_born_pids, S1, #{}),
            GoneBorn = lists:sum([C || {P, C} <- maps:to_list(ExecOf),
                                       maps:get(P, Deltas) =:= dead, maps:is_key(P, BornPids)]),
            GoneCands = lists:sum([C || {P, C} <- maps:to_list(ExecOf),
                                        maps:get(P, Deltas) =:= dead]) - GoneBorn,
            BornPer = if GoneBorn > 0 -> max(0, GoneReds - PerSample * GoneCands) / GoneBorn;
                         true -> 0 end,
            Weight = fun(P, C) ->
                         case maps:get(P, Deltas) of
                             dead -> case maps:is_key(P, BornPids) of
                                         true -> BornPer * C;
                                         false -> PerSample * C
                                     end;
                             R -> max(0, R) * C / maps:get(P, ExecOf)
                         end
                     end,
            ByStack = lists:foldl(fun({P, Fs, C}, M) ->
                                      W = Weight(P, C),
                                      maps:update_with(Fs, fun({C0, W0}) -> {C0 + C, W0 + W} end,
                                                       {C, W}, M)
                                  end, #{}, Running),
            Stacks = lists:sublist(lists:reverse(lists:keysort(2,
                         [{Fs, W, C} || {Fs, {C, W}} <- maps:to_list(ByStack)])), SampleStacksOut),
            Mods = lists:usort([M || {Fs, _, _} <- Stacks, {M, _, _} <- Fs] ++
                               [M || {Fs, _} <- Blocked, {M, _, _} <- Fs]),
            Known = SampleOrigins(Mods, maps:get(s_origins, S1)),
            Section = #{executing => #{
                period_ms => SamplePeriod,
                ticks => maps:get(s_ticks, S1),
                candidates => length(maps:get(s_cands, S1)),
                stack_candidates => min(SampleStackK, length(maps:get(s_cands, S1))),
                depth => SampleDepth,
                samples => #{running => lists:sum([C || {_, _, C} <- Running]),
                             waiting => Waiting},
                reductions_sampled => LiveReds + PerSample * GoneCands + BornPer * GoneBorn,
                dropped => maps:get(s_dropped, S1),
                failed_ticks => maps:get(s_failed, S1),
                tick_us => maps:get(s_tick_us, S1, 0),
                run_ms => SampleRunMs,
                located => maps:get(s_run_located, S1, 0),
                born => maps:get(s_born_located, S1, 0),
                stacks => [#{frames => Fs, samples => C, reductions => W} || {Fs, W, C} <- Stacks],
                blocked => [#{frames => Fs, samples => C} || {Fs, C} <- Blocked],
                origins => [#{module => M, origin => maps:get(M, Known, <<"other">>)} || M <- Mods]}},
            {Section, SampleReset(S1#{s_origins => Known}, NextCands)}
    end
end,

%% ---- The guest's budget ----
%% Everything the session does on the node is measured and budgeted
%% (docs/OBSERVE.md "The guest's budget"): the time the session process
%% spends working (the scan, the sampler's ticks, the duty cycle's steps
%% without the barriers it waits in, every other request), taken with the
%% monotonic clock around each step, as a share of one scheduler over the
%% window; and, when calls are counted under a budget, the work the
%% breakpoints take from the node (the measured cost of a counted call path
%% x the time the patterns were set x the node's busy schedulers). Over the
%% budget the session lengthens the sampler's period (doubling, up to the
%% snapshot interval or 5 s), and it gives counting only what is left of the
%% budget; under half of it the period comes back towards the one asked for.
%% What could not be kept within it is said in the snapshot's `observer`.
GuestBudget = case maps:get(guest_budget, Args, 0.01) of
                  GuestArg when is_number(GuestArg), GuestArg > 0 -> GuestArg;
                  _ -> 0.01
              end,
%% The node's busy schedulers over a window, from the utilisation.
BusySchedulers = fun(#{total := U}, Online) when is_number(U) -> U * Online;
                    (_, _) -> null
                 end,
%% The counting's share of one scheduler over the window, or null.
CountingShare = fun(#{trace := #{duty := #{cost := C, modules := Ms}}}, Busy, WindowUs)
                      when is_number(C), is_number(Busy), Ms =/= [] ->
                        Exp = lists:sum([min(1.0, E / max(1, WindowUs)) || #{exposed_us := E} <- Ms]),
                        C * Exp / length(Ms) * Busy;
                   (_, _, _) -> null
                end,
%% The observer section of a sample and the session state with the budget's
%% adaptation for the next interval.
%% The session's share of a scheduler is measured two ways: the wall time of
%% its steps (exact on a quiet node, too high on a busy one, where the
%% session is scheduled out in the middle of a step), and its share of the
%% node's reductions times the node's busy schedulers (blind to how long a
%% reduction takes, but not to being scheduled out); the lower one counts.
Guest = fun(Reply, S, Own, Others, WindowUs, BusyUs, UtilRaw, Online, Work) ->
    WallShare = BusyUs / max(1, WindowUs),
    Busy = BusySchedulers(UtilRaw, Online),
    RedsShare = case Busy of
                    null -> null;
                    _ -> Busy * Own / max(1, Own + Work)
                end,
    Share = case RedsShare of null -> WallShare; _ -> min(WallShare, RedsShare) end,
    Counting = CountingShare(Reply, Busy, WindowUs),
    Full = maps:get(traced, S) =/= [] andalso not maps:get(d_on, S, false),
    Cost = Share + case Counting of null -> 0; _ -> Counting end,
    Within = Cost =< GuestBudget,
    Period = maps:get(s_period, S, SamplePeriod),
    PeriodMax = max(SamplePeriod, min(5000, WindowUs div 1000)),
    NewPeriod = if SamplePeriod =:= 0 -> 0;
                   not Within, Period < PeriodMax -> min(PeriodMax, 2 * Period);
                   Cost < GuestBudget / 2, Period > SamplePeriod -> max(SamplePeriod, Period div 2);
                   true -> Period
                end,
    %% counting's allowance for the next window, as a share of the node's
    %% work: what the session's own steps leave of the budget, and never less
    %% than a quarter of it (modules were asked for: counting them is the
    %% point), within the overhead asked for
    CountBudget = case maps:get(d_on, S, false) of
                      false -> null;
                      true -> min(Overhead, max(GuestBudget / 4, GuestBudget - Share) /
                                            max(0.01, case Busy of null -> Online; _ -> Busy end))
                  end,
    Notes = [iolist_to_binary(io_lib:format(
                 "observer: the sampler's period lengthened from ~b to ~b ms to keep within "
                 "the budget", [Period, NewPeriod])) || NewPeriod > Period] ++
            [iolist_to_binary(io_lib:format(
                 "observer: over its budget: ~.2f% of a scheduler against ~.2f% "
                 "(scan ~.2f%, sampler ~.2f%, counting ~s)",
                 [100 * Cost, 100 * GuestBudget, 100 * maps:get(scan_us, S, 0) / max(1, WindowUs),
                  100 * maps:get(s_tick_us, S, 0) / max(1, WindowUs),
                  case Counting of null -> "not measured";
                                   _ -> io_lib:format("~.2f%", [100 * Counting]) end]))
             || not Within],
    Section = #{budget => GuestBudget, cost => Cost, within_budget => Within,
                busy_us => BusyUs, share => Share, share_wall => WallShare,
                share_reductions => RedsShare, counting => Counting,
                counting_budget => CountBudget, counting_full => Full,
                reductions => Own, processes => length(maps:get(mine, S)),
                memory => lists:sum([M || P <- maps:get(mine, S),
                                          {memory, M} <- [erlang:process_info(P, memory)]]),
                pids => maps:get(mine, S),
                scan_us => maps:get(scan_us, S, 0), sampler_us => maps:get(s_tick_us, S, 0),
                duty_us => maps:get(o_duty_us, S, 0), other_us => maps:get(o_other_us, S, 0),
                sample_period_ms => SamplePeriod, sample_period_used_ms => Period,
                sample_period_next_ms => NewPeriod,
                others => #{processes => length(Others),
                            reductions => lists:sum([D || {_, _, D} <- Others]),
                            kinds => lists:usort([K || {K, _, _} <- Others])},
                notes => Notes},
    S2 = case CountBudget of null -> S; _ -> S#{d_overhead => CountBudget} end,
    {Section, S2#{s_period => NewPeriod, s_tick_us => 0, o_duty_us => 0, o_other_us => 0}}
end,

%% The utilisation with the observer's own share of the schedulers left out
%% of the total and said apart.
ObserverUtil = fun(UtilRaw, Observer, Online) ->
    ObsUtil = maps:get(share, Observer) / max(1, Online),
    case UtilRaw of
        #{total := UT} when is_number(UT) ->
            UtilRaw#{total => max(0.0, UT - ObsUtil), observer => min(UT, ObsUtil)};
        _ -> UtilRaw#{observer => null}
    end
end,
ScanNote = fun(#{partial := true, pids := Pids, all := All}) ->
                  [iolist_to_binary(io_lib:format(
                       "processes: scanned ~b of ~b (scan cap or time budget reached)",
                       [length(Pids), All]))];
              (_) -> []
           end,
%% A full sample: node totals and top lists over the interval since State.
%% Written as stages with few variables each: erl_eval merges the whole
%% environment after every argument it evaluates, so a step costs in
%% proportion to the variables in scope (one function of a hundred made
%% every step of a sample ten times dearer).
%%
%% The scan: {Pids, Reductions} of every process, and what ran.
%% The scan allocates about 16 words per process (its lists of pids,
%% reductions and deltas): with a heap of twice that, a snapshot's garbage
%% fits and the session collects about once per snapshot instead of 7-8 times
%% (each collection copying the previous scan's lists, on a dirty scheduler
%% once the heap passes 128k words). At most 2M words (16 MB, at 62k
%% processes and more); the heap is the observer's memory in every snapshot.
HeapWords = fun(Count) ->
    process_flag(min_heap_size, min(2000000, 32 * min(Count, ScanCap)))
end,
SampleScan = fun(S, Start) ->
    Mine = maps:get(mine, S),
    All = erlang:processes(),
    Count = erlang:system_info(process_count),
    HeapWords(Count),
    Capped = case Count > ScanCap of true -> lists:sublist(All, ScanCap); false -> All end,
    {Pids, Reds, Partial} = ScanLoop(Capped, Capped, length(Capped), Start + BudgetMs, 0, []),
    RanAll = WithoutMine(Ran(Pids, Reds, maps:get(prev, S)), Mine),
    RanPids = MsRun(RanAll, MsCandidate),
    Scans = maps:get(scans, S, 0),
    Full = Scans rem HeapFullEvery =:= 0 orelse 4 * length(RanPids) > length(Pids),
    {Heaps0, HeapFloor} = HeapScan(Pids, RanPids, {maps:get(heaps, S, []),
                                                   maps:get(heap_floor, S, 0)}, Scans),
    Heaps = WithoutMine(Heaps0, Mine),
    %% a runnable process that was not scheduled did not run, but its queue
    %% may have grown: on a node with a run queue every queue is read
    QueuesFull = Full orelse erlang:statistics(total_run_queue_lengths) > 0,
    Queues = WithoutMine(QueueScan(Pids, RanPids, maps:get(queues, S, []), QueuesFull), Mine),
    #{pids => Pids, reds => Reds, partial => Partial orelse length(All) > ScanCap,
      count => Count, all => length(All), ran => RanAll, heaps => Heaps, queues => Queues,
      heap_floor => HeapFloor,
      hot => lists:sublist(lists:reverse(lists:sort(RanAll)), TopRN + maps:get(ct_keep, S, 0))}
end,
%% The node's totals over the window and the three top lists (observers'
%% processes left out, their reductions out of the node's).
SampleLists = fun(S, #{ran := RanAll, hot := Hot, heaps := Heaps, queues := Queues}) ->
    OldTotals = maps:get(totals, S),
    T = Totals(),
    Own = maps:get(own, T) - maps:get(own, OldTotals, maps:get(own, T)),
    DeltaMap = maps:from_list(MsRun(RanAll, MsSwap)),
    Work0 = max(0, maps:get(reds, T) - maps:get(reds, OldTotals) - Own),
    DMs = DetailMs(Work0),
    {TopReds, Os1, SL1} = Listed(Hot, DeltaMap, DMs, S),
    {TopMem, Os2, SL2} = Listed(ByMemory(Heaps), DeltaMap, DMs, SL1),
    {TopQueue, Os3, SL3} = Listed(lists:sublist(lists:reverse(lists:sort(Queues)), TopN + 8),
                                  DeltaMap, DMs, SL2),
    Others = [{K, P, maps:get(P, DeltaMap, 0)} || {K, P} <- lists:usort(Os1 ++ Os2 ++ Os3)],
    OthersReds = lists:sum([D || {_, _, D} <- Others]),
    Work = max(0, Work0 - OthersReds),
    %% shares against the node's own work (other observers' left out too)
    Reshare = fun(L) when OthersReds =:= 0 -> L;
                 (L) -> [M#{cpu_share => if Work > 0 -> min(1.0, R / Work); true -> 0.0 end}
                         || #{reductions := R} = M <- L] end,
    #{totals => T, old => OldTotals, own => Own, delta_map => DeltaMap, others => Others,
      others_reds => OthersReds, work => Work, state => SL3,
      lists => #{reductions => Reshare(TopReds), memory => Reshare(TopMem),
                 message_queue => Reshare(TopQueue)}}
end,
%% The sampler's section and its next candidates: processes that did real
%% work (at least 1% of the node's and 2,000 reductions a second); an idle
%% node has none, and the sampler then does not wake up at all.
SampleNext = fun(#{hot := Hot, partial := Partial},
                 #{state := SL, delta_map := DeltaMap, others := Others,
                   others_reds := OthersReds, work := Work}, Window) ->
    OthersSet = [P || {_, P, _} <- Others],
    LiveDelta = fun(P) -> case maps:find(P, DeltaMap) of
                              {ok, D} -> D;
                              error -> case erlang:is_process_alive(P) of
                                           true -> 0;
                                           false -> dead
                                       end
                          end end,
    MinCand = max(2 * Window, Work div 100),
    %% the work of processes gone by now (unknown after a partial scan)
    Gone = case Partial of
               true -> 0;
               false -> max(0, Work - (lists:sum(maps:values(DeltaMap)) - OthersReds))
           end,
    SampleSnapshot(SL, LiveDelta, [P || {D, P} <- lists:sublist(Hot, SampleK + length(Others)),
                                        D >= MinCand, not lists:member(P, OthersSet)],
                   {Gone, Gone >= 10 * MinCand})
end,
%% The call counting section.
SampleTrace = fun(S3, Window, UtilRaw) ->
    Traced = maps:get(traced, S3),
    Base = fun(Calls) -> #{modules => [M || {M, _} <- Traced], window_ms => Window,
                           calls => Calls, foreign => maps:get(foreign, S3),
                           isolation => maps:get(isolation, S3)} end,
    case {Traced, maps:get(d_on, S3, false)} of
        {[], _} -> {#{}, [], S3};
        {_, false} ->
            {FCalls, SF} = ReadCalls(S3),
            {#{trace => Base(FCalls)}, [], SF};
        {_, true} ->
            {DCalls, DSection, SD} = DutySnapshot(S3, maps:get(total, UtilRaw)),
            Note = case DSection of
                       #{paused := true, utilisation := PU} ->
                           [iolist_to_binary(io_lib:format(
                                "call counting paused: scheduler utilisation ~.3f over the "
                                "ceiling ~.3f; it resumes when the node is below it",
                                [float(PU), float(PauseAbove)]))];
                       _ -> []
                   end,
            {#{trace => (Base(DCalls))#{duty => DSection}}, Note ++ maps:get(d_notes, SD, []),
             SD#{d_notes => []}}
    end
end,
%% What the node is, now: counts against limits, memory, queues, ETS.
MemKeys = [total, processes, processes_used, system, atom, binary, code, ets],
NodeFacts = fun(Count, Scanned) ->
    Mem = erlang:memory(),
    #{otp_release => list_to_binary(erlang:system_info(otp_release)),
      run_queue => #{total => erlang:statistics(total_run_queue_lengths),
                     per_scheduler => erlang:statistics(run_queue_lengths)},
      processes => #{count => Count, limit => erlang:system_info(process_limit),
                     scanned => Scanned},
      ports => #{count => erlang:system_info(port_count),
                 limit => erlang:system_info(port_limit)},
      atoms => #{count => erlang:system_info(atom_count),
                 limit => erlang:system_info(atom_limit)},
      ets => #{count => erlang:system_info(ets_count), top => EtsTop()},
      memory => maps:from_list([{K, proplists:get_value(K, Mem, null)} || K <- MemKeys]),
      scanned_pids => min(Count, Scanned)}
end,
%% The window's deltas of the node's counters.
Deltas = fun(T, Old) ->
    #{gc => #{count => maps:get(gc_count, T) - maps:get(gc_count, Old),
              words_reclaimed => maps:get(gc_words, T) - maps:get(gc_words, Old)},
      io => #{input_bytes => maps:get(io_in, T) - maps:get(io_in, Old),
              output_bytes => maps:get(io_out, T) - maps:get(io_out, Old)}}
end,
Sample = fun(S) ->
    StartUs = erlang:monotonic_time(microsecond),
    Sc = SampleScan(S, Now()),
    #{totals := T, old := Old, own := Own, work := Work, others := Others} = Ls =
        SampleLists(S, Sc),
    Window = maps:get(t, T) - maps:get(t, Old),
    Online = erlang:system_info(schedulers_online),
    UtilRaw = case {maps:get(swt, Old), maps:get(swt, T)} of
                  {OldSwt, NewSwt} when is_list(OldSwt), is_list(NewSwt) ->
                      Utilisation(OldSwt, NewSwt, Online);
                  _ -> #{total => null, per_scheduler => []}
              end,
    {Executing, S3} = SampleNext(Sc, Ls, Window),
    {Trace, PauseNote, S4} = SampleTrace(S3, Window, UtilRaw),
    ScanUs = erlang:monotonic_time(microsecond) - StartUs,
    BusyUs = ScanUs + maps:get(s_tick_us, S) + maps:get(o_duty_us, S, 0) +
             maps:get(o_other_us, S, 0),
    {Observer, S5} = Guest(Trace, S4#{scan_us => ScanUs, s_tick_us => maps:get(s_tick_us, S)},
                           Own, Others, max(1, maps:get(tu, T) - maps:get(tu, Old)), BusyUs,
                           UtilRaw, Online, Work),
    Facts = NodeFacts(maps:get(count, Sc), length(maps:get(pids, Sc))),
    Reply = maps:merge(maps:merge(maps:merge(Trace, Executing), maps:merge(Facts, Deltas(T, Old))), #{
        window_ms => Window,
        schedulers_online => Online,
        scheduler_utilisation => ObserverUtil(UtilRaw, Observer, Online),
        processes => (maps:get(processes, Facts))#{observer => length(maps:get(mine, S)) +
                                                               length(Others)},
        reductions => #{delta => Work,
                        per_second => if Window > 0 -> Work * 1000 / Window; true -> null end,
                        observer => Own, other_observers => maps:get(others_reds, Ls),
                        total => maps:get(reds, T) - maps:get(reds, Old)},
        observer => Observer,
        top_processes => maps:get(lists, Ls),
        sample_us => ScanUs,
        errors => ScanNote(Sc) ++ PauseNote}),
    {Reply, S5#{prev => {maps:get(pids, Sc), maps:get(reds, Sc)}, heaps => maps:get(heaps, Sc),
                heap_floor => maps:get(heap_floor, Sc), others_pids => [P || {_, P, _} <- Others],
                queues => maps:get(queues, Sc), hot => maps:get(hot, Sc), totals => T,
                scans => maps:get(scans, S, 0) + 1}}
end,

%% Baseline: previous reductions of every process and the node totals.
Baseline = fun(S) ->
    All = erlang:processes(),
    Capped = case length(All) > ScanCap of true -> lists:sublist(All, ScanCap); false -> All end,
    Reds = MsRun(PiAll(Capped, reductions), MsReds),
    Busiest = lists:sublist(lists:reverse(lists:sort(
                  WithoutMine(lists:zip(Reds, Capped), maps:get(mine, S)))), SampleK + 1),
    SampleReset(S#{prev => {Capped, Reds}, heaps => [], hot => [], totals => Totals(), scans => 0},
                [P || {_, P} <- Busiest])
end,

%% ---- call_time (opt-in): time per function in the hottest processes ----
%% call_time patterns count only in processes that carry the `call` trace
%% flag. Each window the session process reads and resets the counters, then
%% re-chooses the flagged set: the top flag_cap processes by reductions over
%% the window, minus those another tracer already holds (refused, reported).
%% No set_on_spawn: the set stays bounded, at the price of missing processes
%% that live shorter than a window. The session process becomes the tracer of
%% the processes it flags; its patterns send no messages, and messages that
%% arrive anyway (another tool's message-sending patterns on functions a
%% flagged process calls) are counted, dropped, and past a cap end the
%% flagging for the session. On OTP 27+ the patterns and flags live in a
%% trace session of our own, so they never meet another tool's.
CallTime = maps:get(call_time, Args, false) =:= true,
FlagCap = max(1, min(1000, maps:get(flag_cap, Args, 100))),
CtMessageCap = 1000,
%% Timing a call costs more than a tiny function takes: past this many timed
%% calls per second the flags go (measured: a loop of tiny functions runs
%% about 70 times slower in a flagged process), and counting goes on.
CtRateCap = 200000,
CtIsolated = fun() ->
    Release = try list_to_integer(erlang:system_info(otp_release)) catch _:_ -> 0 end,
    case Release >= 27 of
        true -> try trace:session_create(giulia, self(), []) catch _:_ -> legacy end;
        false -> legacy
    end
end,
CtPattern = fun(legacy, M, How) -> erlang:trace_pattern({M, '_', '_'}, How, [call_time]);
               (TS, M, How) -> trace:function(TS, {M, '_', '_'}, How, [call_time])
            end,
CtInfo = fun(legacy, What, Item) -> erlang:trace_info(What, Item);
            (TS, What, Item) -> trace:info(TS, What, Item)
         end,
CtFlag = fun(legacy, P, How) -> try erlang:trace(P, How, [call]) catch error:badarg -> 0 end;
            (TS, P, How) -> try trace:process(TS, P, How, [call]) catch error:badarg -> 0 end
         end,
%% Modules whose functions carry no call_time pattern yet (someone else's
%% eprof would otherwise lose or share its counters).
CtFree = fun(TS, MFAs) ->
    Infos = [CtInfo(TS, Fn, call_time) || Fn <- MFAs],
    lists:usort(Infos) -- [{call_time, false}] =:= []
end,
CtStart = fun(Traced, Guardian) ->
    TS = CtIsolated(),
    {Free, Busy} = lists:partition(fun({_, MFAs}) -> CtFree(TS, MFAs) end, Traced),
    %% The guardian learns first, so no pattern is ever set that it does not know.
    case Guardian of
        undefined -> ok;
        G -> G ! {giulia_guardian, call_time, TS, [M || {M, _} <- Free]}
    end,
    [CtPattern(TS, M, true) || {M, _} <- Free],
    Errors = [iolist_to_binary(io_lib:format(
                  "call_time: ~s already has call-time tracing set by another tool; "
                  "counting only", [M])) || {M, _} <- Busy],
    #{ts => TS, mods => Free, flagged => [], refused => [], messages => 0,
      suspended => false, suspend_note => <<>>, errors => Errors}
end,
CtClearPatterns = fun(legacy, Mods) -> [catch CtPattern(legacy, M, false) || M <- Mods], ok;
                     (TS, _Mods) -> catch trace:session_destroy(TS), ok
                  end,
CtUnflag = fun(Ct, Pids) ->
    TS = maps:get(ts, Ct),
    Me = self(),
    [CtFlag(TS, P, false) || P <- Pids, CtInfo(TS, P, tracer) =:= {tracer, Me}],
    ok
end,
CtStop = fun(undefined) -> ok;
            (Ct) ->
                CtUnflag(Ct, maps:get(flagged, Ct)),
                CtClearPatterns(maps:get(ts, Ct), [M || {M, _} <- maps:get(mods, Ct)])
         end,
%% Counts and times per function since the last read, summed over processes:
%% [{M, F, A, Calls, Microseconds}] and per process [{Pid, Calls, Microseconds}].
CtSum = fun(Entries) ->
    lists:foldl(fun({_P, N, S, Us}, {AN, AUs}) -> {AN + N, AUs + S * 1000000 + Us} end,
                {0, 0}, Entries)
end,
CtRead = fun(Ct) ->
    TS = maps:get(ts, Ct),
    PerMod = [begin
        CtPattern(TS, M, pause),
        Infos = [CtInfo(TS, Fn, call_time) || Fn <- MFAs],
        CtPattern(TS, M, restart),
        lists:zip(MFAs, Infos)
    end || {M, MFAs} <- maps:get(mods, Ct)],
    Pairs = lists:append(PerMod),
    Calls = [{Mo, F, A, N, Us} || {{Mo, F, A}, {call_time, L}} <- Pairs, is_list(L),
                                  {N, Us} <- [CtSum(L)], N > 0],
    PerProc = lists:foldl(fun({P, N, S, Us}, Acc) ->
                              {N0, U0} = maps:get(P, Acc, {0, 0}),
                              maps:put(P, {N0 + N, U0 + S * 1000000 + Us}, Acc)
                          end, #{},
                          lists:append([L || {_, {call_time, L}} <- Pairs, is_list(L)])),
    Procs = lists:sublist(lists:reverse(lists:sort(
                [{Us, N, P} || {P, {N, Us}} <- maps:to_list(PerProc)])), 10),
    {Calls, [#{pid => list_to_binary(erlang:pid_to_list(P)), calls => N, time_us => Us}
             || {Us, N, P} <- Procs]}
end,
%% The next flagged set: the top FlagCap processes by reductions over the
%% window (compiled sort over the scan's pid map) that did real work in it
%% (at least 1000 reductions and 0.1% of the node's: reading a process's
%% trace state costs it a few reductions, which must not keep it flagged),
%% never ourselves or our guardian, never a process another tracer holds.
CtHot = fun(Hot, Exclude, NodeReds) ->
    MinDelta = max(1000, NodeReds div 1000),
    lists:sublist([P || {D, P} <- Hot, D >= MinDelta] -- Exclude, FlagCap)
end,
CtRechoose = fun(Ct, Hot0, Exclude, NodeReds) ->
    TS = maps:get(ts, Ct),
    Old = maps:get(flagged, Ct),
    Hot = case maps:get(suspended, Ct) of
              true -> [];
              false -> CtHot(Hot0, Exclude, NodeReds)
          end,
    CtUnflag(Ct, Old -- Hot),
    Me = self(),
    Tried = [{P, CtInfo(TS, P, tracer)} || P <- Hot -- Old],
    Refused = [{P, T} || {P, {tracer, T}} <- Tried, T =/= [], T =/= Me],
    Taken = [P || {P, {tracer, []}} <- Tried, CtFlag(TS, P, true) =:= 1],
    %% kept as ours without asking (asking costs the process a signal);
    %% CtUnflag asks before it removes anything
    Kept = [P || P <- Old, lists:member(P, Hot)],
    Ct#{flagged => Kept ++ Taken, refused => Refused}
end,
CtDescribe = fun(T) when is_pid(T); is_port(T) -> T;
                (T) -> element(1, T)
             end,
%% One window's call_time section; Hot is the scan's processes that ran
%% most over the window, [{Reductions, Pid}] largest first.
CtSample = fun(Ct, Hot, Exclude, NodeReds, WindowMs) ->
    Flagged = length(maps:get(flagged, Ct)),
    {Calls, Procs} = CtRead(Ct),
    Messages = maps:get(messages, Ct),
    Timed = lists:sum([N || {_, _, _, N, _} <- Calls]),
    Rate = Timed * 1000 div max(1, WindowMs),
    TooFast = Rate > CtRateCap andalso not maps:get(suspended, Ct),
    Suspended = maps:get(suspended, Ct) orelse TooFast,
    Ct1 = case TooFast of
              true ->
                  CtUnflag(Ct, maps:get(flagged, Ct)),
                  Ct#{suspended => true, flagged => [],
                      suspend_note => iolist_to_binary(io_lib:format(
                          "call_time: suspended for this session: ~b timed calls/s in the "
                          "flagged processes (over ~b/s: timing functions this small costs "
                          "more than they take); counting only", [Rate, CtRateCap]))};
              false -> Ct
          end,
    Ct2 = CtRechoose(Ct1#{messages => 0}, Hot, Exclude, NodeReds),
    Refused = maps:get(refused, Ct2),
    Notes = maps:get(errors, Ct) ++
        [iolist_to_binary(io_lib:format(
             "call_time: ~b processes left unflagged: already traced by another tool "
             "(e.g. ~p traced by ~p)", [length(Refused), P, CtDescribe(T)]))
         || {P, T} <- lists:sublist(Refused, 1)] ++
        [iolist_to_binary(io_lib:format(
             "call_time: dropped ~b trace messages sent to us by another tool's "
             "message-sending patterns on functions the flagged processes call", [Messages]))
         || Messages > 0] ++
        [maps:get(suspend_note, Ct2) || Suspended],
    Section = #{calls => Calls, processes => Procs, flagged => Flagged,
                flag_cap => FlagCap, refused => length(Refused),
                trace_messages => Messages, suspended => Suspended,
                isolation => case maps:get(ts, Ct) of legacy -> global; _ -> trace_session end},
    {Section, Notes, Ct2#{errors => []}}
end,
%% Wraps a sample reply: adds the call_time section and its notes.
CtWrap = fun({Reply, S1}, _S0) ->
    case {maps:get(call_time, S1, undefined), Reply} of
        {undefined, _} -> {Reply, S1};
        {Ct, #{errors := Errors}} ->
            Exclude = maps:get(mine, S1) ++ maps:get(others_pids, S1, []),
            NodeReds = case Reply of
                           #{reductions := #{delta := RD}} when is_integer(RD) -> RD;
                           _ -> 0
                       end,
            WindowMs = case Reply of
                           #{window_ms := W} when is_integer(W) -> W;
                           _ -> 1000
                       end,
            {Section, Notes, Ct2} = CtSample(Ct, maps:get(hot, S1), Exclude, NodeReds, WindowMs),
            {Reply#{call_time => Section, errors => Errors ++ Notes},
             S1#{call_time => Ct2}};
        _ -> {Reply, S1}
    end
end,
%% A message that reached the session's loop: trace messages are counted,
%% and past the cap every flag is removed for the rest of the session.
%% (the sampler's own scheduling events, late after its window, are dropped)
CtStray = fun({trace_ts, _, Ev, _, _}, S) when Ev =:= in; Ev =:= out; Ev =:= in_exiting;
                                               Ev =:= out_exiting; Ev =:= out_exited -> S;
             (Msg, S) when element(1, Msg) =:= trace; element(1, Msg) =:= trace_ts ->
                 case maps:get(call_time, S, undefined) of
                     undefined -> S;
                     Ct ->
                         N = maps:get(messages, Ct) + 1,
                         case N > CtMessageCap andalso not maps:get(suspended, Ct) of
                             true ->
                                 CtUnflag(Ct, maps:get(flagged, Ct)),
                                 S#{call_time => Ct#{messages => N, suspended => true,
                                                     flagged => [],
                                                     suspend_note =>
                                     <<"call_time: suspended for this session (too many "
                                       "foreign trace messages); counting only">>}};
                             false -> S#{call_time => Ct#{messages => N}}
                         end
                 end;
            (_Msg, S) -> S
         end,

%% A new baseline after a detached while: counters read and thrown away,
%% node totals and per-process reductions taken anew.
Rebase = fun(S) ->
    case maps:get(call_time, S, undefined) of
        undefined -> ok;
        Ct -> catch CtRead(Ct)
    end,
    Baseline(case maps:get(d_on, S, false) of
                 true -> DutyZero(S);
                 false -> element(2, ReadCalls(S))
             end)
end,

Cleanup = fun(S) ->
    CtStop(maps:get(call_time, S, undefined)),
    ClearPatterns(Cc(), [M || {M, _} <- maps:get(traced, S),
                              not lists:member(M, maps:get(d_backoff, S, []))]),
    case maps:get(swt_set, S) of
        true -> catch erlang:system_flag(scheduler_wall_time, false);
        false -> ok
    end,
    case maps:get(guardian, S) of
        undefined -> ok;
        G -> G ! {giulia_guardian, done}
    end,
    ok
end,

%% S after F(S), with the time F took (less the pattern barriers it waited
%% in: the session is scheduled out there) added to the observer's Key.
BarrierUs = fun(S) -> maps:get(o_waited_us, S, 0) end,
Charge = fun(Key, S, F) ->
    U0 = erlang:monotonic_time(microsecond),
    B0 = BarrierUs(S),
    S1 = F(S),
    Spent = erlang:monotonic_time(microsecond) - U0 - max(0, BarrierUs(S1) - B0),
    S1#{Key => maps:get(Key, S1, 0) + max(0, Spent)}
end,
%% A one-shot session (a pulse, a trace, `top`) has no observer to come
%% back: when its node goes down it cleans up at once.
OneShot = maps:get(oneshot, Args, false) =:= true,

Loop = fun Loop(S) ->
    T0 = Now(),
    Wait = max(0, lists:min([maps:get(lease_until, S), maps:get(s_next, S, infinity),
                             DutyNext(S)]) - T0),
    %% Duty cycling waits at high priority, so that a pattern goes off on
    %% time on a busy node (a late off is counting past the budget); every
    %% request is served at normal priority (a sample's scan must not take
    %% CPU from the application).
    DutyPrio = maps:get(d_on, S, false),
    DutyPrio andalso process_flag(priority, high),
    receive
        {giulia, Ref, sample} ->
            SQ = Charge(o_duty_us, S, DutyQuiet),
            DutyPrio andalso process_flag(priority, normal),
            {Reply, S2} = try
                              Sampled = Sample(SQ),
                              CtU0 = erlang:monotonic_time(microsecond),
                              {CtReply, CtS} = CtWrap(Sampled, SQ),
                              %% call_time's reads and flag changes count in
                              %% the next window's observer cost
                              {CtReply, CtS#{o_other_us => maps:get(o_other_us, CtS, 0) +
                                                 erlang:monotonic_time(microsecond) - CtU0}}
                          catch C:E -> {{error, iolist_to_binary(io_lib:format("~p:~p", [C, E]))}, SQ}
                          end,
            S3 = Charge(o_other_us, S2, fun(SS) -> Send({giulia, Ref, Reply}), SS end),
            Loop(S3#{lease_until => Now() + LeaseMs});
        {giulia, Ref, baseline} ->
            DutyPrio andalso process_flag(priority, normal),
            S2 = Charge(o_other_us, S, Baseline),
            Send({giulia, Ref, ok}),
            Loop(S2#{lease_until => Now() + LeaseMs});
        {giulia, Ref, ping} ->
            Send({giulia, Ref, pong}),
            Loop(S#{lease_until => Now() + LeaseMs});
        {giulia, Ref, {attach, NewOwner}} when is_pid(NewOwner) ->
            %% A new connection of the observer takes the session over: replies
            %% go there, its node is monitored, and the interval restarts (the
            %% time detached is a gap, not a long interval).
            DutyPrio andalso process_flag(priority, normal),
            put(giulia_owner, NewOwner),
            NewNode = node(NewOwner),
            erlang:monitor_node(NewNode, true),
            S2 = Rebase(S),
            Send({giulia, Ref, attached}),
            Loop(S2#{cnode => NewNode, detached => false, lease_until => Now() + LeaseMs});
        {giulia, Ref, stop} ->
            Cleanup(S),
            Send({giulia, Ref, stopped});
        {nodedown, Down} ->
            case maps:get(cnode, S) of
                Down when OneShot -> Cleanup(S);
                Down -> Loop(S#{detached => true});
                _ -> Loop(S)
            end;
        Other ->
            Loop(CtStray(Other, S))
    after Wait ->
        case Now() >= maps:get(lease_until, S) of
            true ->
                Cleanup(S),
                Send({giulia, 'end', lease_expired});
            false ->
                %% the sampler's tick at normal priority; only the duty
                %% steps run high
                DutyPrio andalso process_flag(priority, normal),
                S1 = SampleStep(S),
                DutyPrio andalso process_flag(priority, high),
                Loop(Charge(o_duty_us, S1, DutyStep))
        end
    end
end,

%% ---- The session process: set up, then the loop ----
put(giulia_session, Id),
put(giulia_owner, Owner),
erlang:monitor_node(CNode, true),
CcTS = case ModuleNames of [] -> legacy; _ -> CcSession() end,
put(giulia_cc, CcTS),
Checked = [CheckModule(N) || N <- ModuleNames],
Traced = [{M, MFAs} || {ok, M, MFAs, _} <- Checked],
TraceErrors = [E || {error, E} <- Checked],
%% what other tools hold, looked at before anything of ours is set
Foreign = case ModuleNames of
              [] -> [];
              _ -> lists:append([Ns || {ok, _, _, Ns} <- Checked]) ++ ForeignTracers()
          end,
Guardian = case Traced of
    [] -> undefined;
    _ ->
        Session = self(),
        Mods = [M || {M, _} <- Traced],
        erlang:spawn(fun() ->
            put(giulia_guardian, Id),
            MRef = erlang:monitor(process, Session),
            Guard = fun Guard(CtSet, Ours) ->
                receive
                    {giulia_guardian, call_time, TS, CtMods} -> Guard({TS, CtMods}, Ours);
                    {giulia_guardian, drop, Dropped} -> Guard(CtSet, Ours -- [Dropped]);
                    {giulia_guardian, done} -> ok;
                    {'DOWN', MRef, process, _, _} ->
                        ClearPatterns(CcTS, Ours),
                        %% the runtime has dropped the `call` flags of the
                        %% processes the dead session traced; the patterns stay
                        case CtSet of
                            none -> ok;
                            {TS, CtMods} -> CtClearPatterns(TS, CtMods)
                        end
                end
            end,
            Guard(none, Mods)
        end)
end,
[CcPattern(M, true) || {M, _} <- Traced],
Ct = case CallTime andalso Traced =/= [] of
         true -> CtStart(Traced, Guardian);
         false -> undefined
     end,
erlang:system_flag(scheduler_wall_time, true),
SwtSet = true,
Isolation = case CcTS of legacy -> global; _ -> trace_session end,
Mine = [self() | [G || G <- [Guardian], is_pid(G)]],
S0 = DutyInit(Baseline(#{mine => Mine, ct_keep => case Ct of undefined -> 0; _ -> FlagCap + 8 end,
                         traced => Traced, c_prev => #{}, foreign => Foreign,
                         isolation => Isolation, swt_set => SwtSet, guardian => Guardian,
                         call_time => Ct, s_origins => #{}, cnode => CNode,
                         detached => false}), Traced),
Parent ! {Ready, #{otp_release => list_to_binary(erlang:system_info(otp_release)),
                   trace_errors => TraceErrors, foreign => Foreign,
                   isolation => Isolation,
                   traced => [M || {M, _} <- Traced]}},
Loop(S0#{lease_until => Now() + LeaseMs}).
