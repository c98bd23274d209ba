%% session/40_snapshot.erl - the session's text, part: the guest's budget and the snapshot.
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

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
%% Last, the scan of every process is thinned (GuestScanEvery): snapshots
%% between two scans carry the last scan's lists. On a quiet node the
%% node's own CPU time (GuestCpu) shows what the session's clock cannot.
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
%% Written as small funs: erl_eval merges the whole scope's bindings into
%% every argument it evaluates, so one wide function building a map of
%% twenty fields cost the session more than the facts it reports (see
%% docs/OBSERVE.md "Each step's work").
GuestDefaults = #{d_on => false, scan_us => 0, s_tick_us => 0, o_duty_us => 0, o_other_us => 0},
%% {Share, WallShare, RedsShare, Busy}
GuestShare = fun(BusyUs, WindowUs, UtilRaw, Online, Own, Work) ->
    WallShare = BusyUs / max(1, WindowUs),
    case BusySchedulers(UtilRaw, Online) of
        null -> {WallShare, WallShare, null, null};
        Busy ->
            RedsShare = Busy * Own / max(1, Own + Work),
            {min(WallShare, RedsShare), WallShare, RedsShare, Busy}
    end
end,
%% The sampler's next period: doubled while over the budget (up to the
%% snapshot interval or 5 s), halved back once under half of it.
GuestPeriod = fun(Within, Cost, Period, WindowUs) ->
    PeriodMax = max(SamplePeriod, min(5000, WindowUs div 1000)),
    if SamplePeriod =:= 0 -> 0;
       not Within, Period < PeriodMax -> min(PeriodMax, 2 * Period);
       Cost < GuestBudget / 2, Period > SamplePeriod -> max(SamplePeriod, Period div 2);
       true -> Period
    end
end,
%% Counting's allowance for the next window, as a share of the node's work:
%% what the session's own steps leave of the budget, and never less than a
%% quarter of it (modules were asked for: counting them is the point),
%% within the overhead asked for.
GuestCountBudget = fun(false, _, _, _) -> null;
                      (true, Share, Busy, Online) ->
                          min(Overhead, max(GuestBudget / 4, GuestBudget - Share) /
                                        max(0.01, case Busy of null -> Online; _ -> Busy end))
                   end,
GuestLengthened = fun(Period, NewPeriod) when NewPeriod > Period ->
                         [iolist_to_binary(io_lib:format(
                              "observer: the sampler's period lengthened from ~b to ~b ms to "
                              "keep within the budget", [Period, NewPeriod]))];
                      (_, _) -> []
                   end,
GuestOver = fun(true, _, _, _, _) -> [];
               (false, Cost, ScanUs, TickUs, {Counting, WindowUs}) ->
                   [iolist_to_binary(io_lib:format(
                        "observer: over its budget: ~.2f% of a scheduler against ~.2f% "
                        "(scan ~.2f%, sampler ~.2f%, counting ~s)",
                        [100 * Cost, 100 * GuestBudget, 100 * ScanUs / max(1, WindowUs),
                         100 * TickUs / max(1, WindowUs),
                         case Counting of null -> "not measured";
                                          _ -> io_lib:format("~.2f%", [100 * Counting]) end]))]
            end,
%% [observer's {Kind, Pid, Reductions}] -> the `others` part
GuestOthers = fun(Others) ->
    #{processes => length(Others), reductions => lists:sum([D || {_, _, D} <- Others]),
      kinds => lists:usort([K || {K, _, _} <- Others])}
end,
%% The node's CPU time so far (utime + stime of its OS process, in ticks of
%% 10 ms, from /proc/self/stat: one read of a file through prim_file, which
%% every node has), or null where there is no such file.
NodeCpuTicks = fun() ->
    try prim_file:read_file("/proc/self/stat") of
        {ok, Stat} ->
            [_, StatRest] = binary:split(Stat, <<") ">>),
            [_, _, _, _, _, _, _, _, _, _, _, UTicks, STicks | _] =
                binary:split(StatRest, <<" ">>, [global]),
            binary_to_integer(UTicks) + binary_to_integer(STicks);
        _ -> null
    catch _:_ -> null
    end
end,
%% The session's share of the node's CPU over a period, on a quiet node
%% (its reductions at least the rest of the node's): the node's CPU time over
%% the period times the session's share of the reductions. It sees what the
%% session's clock cannot: the schedulers its requests wake and that spin
%% before they sleep again, its collections on a dirty scheduler, the
%% distribution's work for its replies. Null on a busy node, where the
%% node's CPU is the application's.
GuestCpuShare = fun(C0, C1, DUs, {O, W, _}) when is_integer(C0), is_integer(C1), DUs > 0,
                                                 O >= W ->
                        (C1 - C0) * 10000 / DUs * O / max(1, O + W);
                   (_, _, _, _) -> null
                end,
%% The scan's period, in snapshots: doubled while the session's own share
%% (the larger of its clock's and, on a quiet node, of the node's CPU) is
%% over the budget, up to 8 snapshots and 30 s; halved back once under half
%% of it.
GuestScanEvery = fun(K, PeriodShare, WindowUs) ->
    KMax = lists:max([1 | [X || X <- [2, 4, 8], X * WindowUs =< 30000000]]),
    if PeriodShare > GuestBudget, K < KMax -> min(KMax, 2 * K);
       PeriodShare < GuestBudget / 2, K > 1 -> K div 2;
       true -> min(K, KMax)
    end
end,
GuestThinned = fun(K, K2, WindowUs) when K2 > K ->
                      [iolist_to_binary(io_lib:format(
                           "observer: the scan of every process now runs every ~b snapshots "
                           "(about every ~b ms) to keep within the budget; the process lists "
                           "between two scans are the last scan's", [K2, K2 * WindowUs div 1000]))];
                  (_, _, _) -> []
               end,
%% Every GuestCpuEveryUs: the node's CPU read again, the period's share
%% measured and the scan's period decided. {CpuShare | null, Notes, S}; the
%% share of the last period stands for the windows until the next read.
GuestCpuEveryUs = 5000000,
GuestCpu = fun(S, Own, Work, ShareUs, WindowUs) ->
    CpuNowUs = erlang:monotonic_time(microsecond),
    {T0, C0, {O0, W0, Sh0}, Last} = maps:get(g_cpu, S, {CpuNowUs, null, {0, 0, 0}, null}),
    Acc = {O0 + Own, W0 + Work, Sh0 + ShareUs},
    case C0 =/= null andalso CpuNowUs - T0 < GuestCpuEveryUs of
        true -> {Last, [], S#{g_cpu => {T0, C0, Acc, Last}}};
        false ->
            C1 = NodeCpuTicks(),
            Cpu = GuestCpuShare(C0, C1, CpuNowUs - T0, Acc),
            Clock = Sh0 / max(1, CpuNowUs - T0),
            K = maps:get(scan_every, S, 1),
            K2 = case C0 of
                     null -> K;
                     _ -> GuestScanEvery(K, case Cpu of null -> Clock; _ -> max(Cpu, Clock) end,
                                         WindowUs)
                 end,
            {Cpu, GuestThinned(K, K2, WindowUs),
             S#{g_cpu => {CpuNowUs, C1, {0, 0, 0}, Cpu}, scan_every => K2}}
    end
end,
GuestMemory = fun(Mine) ->
    lists:sum([M || P <- Mine, {memory, M} <- [erlang:process_info(P, memory)]])
end,
Guest = fun(Reply, S, Own, Others, WindowUs, BusyUs, UtilRaw, Online, Work) ->
    #{mine := Mine, traced := Traced, d_on := DOn, scan_us := ScanUs, s_tick_us := TickUs,
      o_duty_us := DutyUs, o_other_us := OtherUs} = maps:merge(GuestDefaults, S),
    Period = maps:get(s_period, S, SamplePeriod),
    {Share0, WallShare, RedsShare, Busy} = GuestShare(BusyUs, WindowUs, UtilRaw, Online, Own, Work),
    Every = maps:get(scan_every, S, 1),
    {CpuShare, ThinNotes, SC} = GuestCpu(S, Own, Work, Share0 * WindowUs, WindowUs),
    Share = case CpuShare of null -> Share0; _ -> max(Share0, CpuShare) end,
    Counting = CountingShare(Reply, Busy, WindowUs),
    Cost = case Counting of null -> Share; _ -> Share + Counting end,
    Within = Cost =< GuestBudget,
    NewPeriod = GuestPeriod(Within, Cost, Period, WindowUs),
    CountBudget = GuestCountBudget(DOn, Share, Busy, Online),
    Section = #{budget => GuestBudget, cost => Cost, within_budget => Within,
                busy_us => BusyUs, share => Share, share_wall => WallShare,
                share_reductions => RedsShare, share_cpu => CpuShare, counting => Counting,
                counting_budget => CountBudget, counting_full => Traced =/= [] andalso not DOn,
                reductions => Own, processes => length(Mine), memory => GuestMemory(Mine),
                pids => Mine, scan_us => ScanUs, sampler_us => TickUs,
                duty_us => DutyUs, other_us => OtherUs,
                sample_period_ms => SamplePeriod, sample_period_used_ms => Period,
                sample_period_next_ms => NewPeriod, others => GuestOthers(Others),
                scan_every => Every, scan_every_next => maps:get(scan_every, SC, 1),
                scanned => maps:get(g_scanned, S, true),
                notes => GuestLengthened(Period, NewPeriod) ++ ThinNotes ++
                         GuestOver(Within, Cost, ScanUs, TickUs, {Counting, WindowUs})},
    S2 = case CountBudget of null -> SC; _ -> SC#{d_overhead => CountBudget} end,
    %% the sampler's tick time of the windows without a scan, for its
    %% section at the next scan (its interval is the scan's)
    TickAcc = case maps:get(g_scanned, S, true) of
                  true -> 0;
                  false -> maps:get(s_tick_acc, S, 0) + TickUs
              end,
    {Section, S2#{s_period => NewPeriod, s_tick_us => 0, s_tick_acc => TickAcc, o_duty_us => 0,
                  o_other_us => 0}}
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
    {Pids, Infos, Partial} = ScanLoop(Capped, Capped, length(Capped), Start + BudgetMs, 0, []),
    RanAll = WithoutMine(Ran(Pids, Infos, maps:get(prev, S)), Mine),
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
    #{pids => Pids, infos => Infos, partial => Partial orelse length(All) > ScanCap,
      count => Count, all => length(All), ran => RanAll, heaps => Heaps, queues => Queues,
      heap_floor => HeapFloor,
      hot => lists:sublist(lists:reverse(lists:sort(RanAll)), TopRN + maps:get(ct_keep, S, 0))}
end,
%% The node's totals over the window and the three top lists (observers'
%% processes left out, their reductions out of the node's).
%% A list's shares against the node's own work (other observers' left out
%% too).
Reshare = fun(L, 0, _) -> L;
             (L, _, Work) -> [M#{cpu_share => if Work > 0 -> min(1.0, R / Work); true -> 0.0 end}
                              || #{reductions := R} = M <- L]
          end,
%% The three lists, and the other observers' processes found in them
%% ({Kind, Pid, Reductions}).
SampleTops = fun(#{hot := Hot, heaps := Heaps, queues := Queues}, DeltaMap, DMs, S) ->
    {TopReds, Os1, SL1} = Listed(Hot, DeltaMap, DMs, S),
    {TopMem, Os2, SL2} = Listed(ByMemory(Heaps), DeltaMap, DMs, SL1),
    {TopQueue, Os3, SL3} = Listed(lists:sublist(lists:reverse(lists:sort(Queues)), TopN + 8),
                                  DeltaMap, DMs, SL2),
    {TopReds, TopMem, TopQueue,
     [{K, P, maps:get(P, DeltaMap, 0)} || {K, P} <- lists:usort(Os1 ++ Os2 ++ Os3)], SL3}
end,
%% The lists' deltas are over the scan's window (since the last scan), the
%% node's figures over the snapshot's (since the last snapshot): the same
%% window unless the budget thinned the scans (GuestScanEvery). Other
%% observers' reductions are known over the scan's window, and taken out of
%% the snapshot's in proportion.
SampleShares = fun({TopReds, TopMem, TopQueue, Others, SL3}, ScanWork0, Work0) ->
    OthersReds = lists:sum([D || {_, _, D} <- Others]),
    ScanWork = max(0, ScanWork0 - OthersReds),
    WindowOthers = case ScanWork0 of
                       Work0 -> OthersReds;
                       _ -> OthersReds * Work0 div max(1, ScanWork0)
                   end,
    #{others => Others, others_reds => WindowOthers, work => max(0, Work0 - WindowOthers),
      scan_work => ScanWork, state => SL3,
      lists => #{reductions => Reshare(TopReds, OthersReds, ScanWork),
                 memory => Reshare(TopMem, OthersReds, ScanWork),
                 message_queue => Reshare(TopQueue, OthersReds, ScanWork)}}
end,
%% Work of the node less the session's own between two totals.
WorkSince = fun(#{own := OwnNow, reds := RedsNow}, Then) ->
    max(0, RedsNow - maps:get(reds, Then) - (OwnNow - maps:get(own, Then, OwnNow)))
end,
SampleLists = fun(#{totals := OldTotals} = S, #{ran := RanAll} = Sc) ->
    T = Totals(),
    Own = maps:get(own, T) - maps:get(own, OldTotals, maps:get(own, T)),
    DeltaMap = maps:from_list(MsRun(RanAll, MsSwap)),
    ScanWork0 = WorkSince(T, maps:get(scan_totals, S, OldTotals)),
    (SampleShares(SampleTops(Sc, DeltaMap, DetailMs(ScanWork0), S), ScanWork0,
                  WorkSince(T, OldTotals)))#{
        totals => T, old => OldTotals, own => Own, delta_map => DeltaMap}
end,
%% A snapshot without a scan (the budget thinned the scans): the node's
%% figures over the window, the last scan's lists marked as carried (they
%% are not the window's: a profile does not count them again), and no
%% sampler section (the sampler's interval is the scan's).
SampleCarried = fun(#{totals := OldTotals, prev := {Pids, Infos}} = S) ->
    T = Totals(),
    Own = maps:get(own, T) - maps:get(own, OldTotals, maps:get(own, T)),
    {#{carried => true, pids => Pids, infos => Infos, partial => false,
       count => erlang:system_info(process_count), all => length(Pids), ran => [],
       heaps => maps:get(heaps, S, []), queues => maps:get(queues, S, []),
       heap_floor => maps:get(heap_floor, S, 0), hot => maps:get(hot, S, [])},
     #{totals => T, old => OldTotals, own => Own, work => WorkSince(T, OldTotals),
       others => [], others_reds => 0, state => S,
       lists => (maps:get(last_lists, S, #{}))#{carried => true}}}
end,
%% The sampler's section and its next candidates: processes that did real
%% work (at least 1% of the node's and 2,000 reductions a second); an idle
%% node has none, and the sampler then does not wake up at all.
SampleNext = fun(#{hot := Hot, partial := Partial},
                 #{state := SL, delta_map := DeltaMap, others := Others,
                   scan_work := Work}, Window) ->
    OthersReds = lists:sum([D || {_, _, D} <- Others]),
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
      memory => maps:with(MemKeys, maps:from_list(Mem)),
      scanned_pids => min(Count, Scanned)}
end,
%% The window's deltas of the node's counters.
Deltas = fun(T, Old) ->
    #{gc => #{count => maps:get(gc_count, T) - maps:get(gc_count, Old),
              words_reclaimed => maps:get(gc_words, T) - maps:get(gc_words, Old)},
      io => #{input_bytes => maps:get(io_in, T) - maps:get(io_in, Old),
              output_bytes => maps:get(io_out, T) - maps:get(io_out, Old)}}
end,
%% A sample in three stages, each a function of few variables (erl_eval's
%% cost of every call grows with the variables in scope: one function for
%% the whole sample cost a tenth of the session's reductions more).
%% What the next snapshot needs of this one's scan (nothing new after a
%% snapshot without one).
SampleKept = fun(false, S5, _, #{totals := T}) -> S5#{totals => T, scan_since => maps:get(scan_since, S5, 0) + 1};
                (true, S5, Sc, #{totals := T, others := Others, lists := Lists}) ->
                    S5#{prev => {maps:get(pids, Sc), maps:get(infos, Sc)},
                        heaps => maps:get(heaps, Sc), heap_floor => maps:get(heap_floor, Sc),
                        others_pids => [P || {_, P, _} <- Others],
                        queues => maps:get(queues, Sc), hot => maps:get(hot, Sc), totals => T,
                        scan_totals => T, scan_since => 0, last_lists => Lists,
                        scans => maps:get(scans, S5, 0) + 1}
             end,
%% The stage after the scan and the lists: the window, the utilisation, the
%% executing view and the call counting.
SampleObserved = fun(S, Sc, #{totals := T, old := Old, own := Own, work := Work,
                              others := Others} = Ls, Window, Online, UtilRaw, Executing, Trace,
                     PauseNote, S4, ScanUs) ->
    BusyUs = ScanUs + maps:get(s_tick_us, S) + maps:get(o_duty_us, S, 0) +
             maps:get(o_other_us, S, 0),
    Scanned = not maps:get(carried, Sc, false),
    {Observer, S5} = Guest(Trace, S4#{scan_us => ScanUs, s_tick_us => maps:get(s_tick_us, S),
                                      g_scanned => Scanned},
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
    {Reply, SampleKept(Scanned, S5, Sc, Ls)}
end,
SampleWindow = fun(S, Sc, #{totals := T, old := Old} = Ls, StartUs) ->
    Window = maps:get(t, T) - maps:get(t, Old),
    Online = erlang:system_info(schedulers_online),
    UtilRaw = case {maps:get(swt, Old), maps:get(swt, T)} of
                  {OldSwt, NewSwt} when is_list(OldSwt), is_list(NewSwt) ->
                      Utilisation(OldSwt, NewSwt, Online);
                  _ -> #{total => null, per_scheduler => []}
              end,
    {Executing, S3} = case Sc of
                          #{carried := true} -> {#{}, S};
                          _ -> SampleNext(Sc, Ls, maps:get(t, T) -
                                                  maps:get(t, maps:get(scan_totals, S, Old)))
                      end,
    {Trace, PauseNote, S4} = SampleTrace(S3, Window, UtilRaw),
    SampleObserved(S, Sc, Ls, Window, Online, UtilRaw, Executing, Trace, PauseNote, S4,
                   erlang:monotonic_time(microsecond) - StartUs)
end,
Sample = fun(S) ->
    StartUs = erlang:monotonic_time(microsecond),
    case maps:get(scan_since, S, 0) + 1 >= maps:get(scan_every, S, 1) orelse
         maps:get(last_lists, S, none) =:= none of
        true ->
            Sc = SampleScan(S, Now()),
            SampleWindow(S, Sc, SampleLists(S, Sc), StartUs);
        false ->
            {Sc, Ls} = SampleCarried(S),
            SampleWindow(S, Sc, Ls, StartUs)
    end
end,

%% Baseline: previous reductions of every process and the node totals.
Baseline = fun(S) ->
    All = erlang:processes(),
    Capped = case length(All) > ScanCap of true -> lists:sublist(All, ScanCap); false -> All end,
    Infos = PiAll(Capped, reductions),
    Reds = MsRun(Infos, MsReds),
    Busiest = lists:sublist(lists:reverse(lists:sort(
                  WithoutMine(lists:zip(Reds, Capped), maps:get(mine, S)))), SampleK + 1),
    T = Totals(),
    SampleReset(S#{prev => {Capped, Infos}, heaps => [], hot => [], totals => T, scans => 0,
                   scan_totals => T, scan_since => 0, last_lists => none},
                [P || {_, P} <- Busiest])
end,

