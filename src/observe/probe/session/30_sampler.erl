%% session/30_sampler.erl - the session's text, part: the sampler.
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

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
                tick_us => maps:get(s_tick_us, S1, 0) + maps:get(s_tick_acc, S1, 0),
                run_ms => SampleRunMs,
                located => maps:get(s_run_located, S1, 0),
                born => maps:get(s_born_located, S1, 0),
                stacks => [#{frames => Fs, samples => C, reductions => W} || {Fs, W, C} <- Stacks],
                blocked => [#{frames => Fs, samples => C} || {Fs, C} <- Blocked],
                origins => [#{module => M, origin => maps:get(M, Known, <<"other">>)} || M <- Mods]}},
            {Section, SampleReset(S1#{s_origins => Known}, NextCands)}
    end
end,

