%% session/60_loop.erl - the session's text, part: the session process: set up, then the loop.
%% The parts are one sequence of expressions, joined in name order at build
%% time (00_setup.erl has the whole text's contract).

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
