%% session/50_call_time.erl - the session's text, part: call_time (opt-in).
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

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

%% A sample asked for, answered: its own function, so that its steps are
%% evaluated among few variables (see Sample).
SampleServe = fun(Ref, S, DutyPrio) ->
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
    U0 = erlang:monotonic_time(microsecond),
    Send({giulia, Ref, Reply}),
    S2#{o_other_us => maps:get(o_other_us, S2, 0) + erlang:monotonic_time(microsecond) - U0,
        lease_until => Now() + LeaseMs}
end,
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
            Loop(SampleServe(Ref, S, DutyPrio));
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

