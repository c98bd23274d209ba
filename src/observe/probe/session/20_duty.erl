%% session/20_duty.erl - the session's text, part: duty-cycled call counting under the overhead budget.
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

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

