%% session/00_setup.erl - the observer's session process, as Erlang
%% expressions: the first part of its text. The parts in this directory are
%% one sequence of expressions, joined in name order at build time into
%% build/gen/session.erl, which is embedded and sent (and linted) whole.
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

