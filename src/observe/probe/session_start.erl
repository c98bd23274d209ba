%% session_start.erl - starts the observer's session process.
%%
%% Evaluated by erl_eval in the process the target's rpc server spawns for
%% the call (no module is loaded), with `Args` bound to the session's
%% arguments (probe.c, obs_probe_start_args) and `Args.body` the text of
%% session.erl. The session process parses and evaluates that text itself,
%% so that every closure of the session is built on its own heap, where the
%% closures' environments share what they have in common. A closure built
%% here and spawned would be copied into the new process, and a copy does not
%% keep that sharing: each closure's environment holds the closures defined
%% before it, so the copy grew to megabytes (9 MB measured) and every step
%% of the session paid for collecting it (docs/OBSERVE.md, "The session
%% process").
%%
%% Returns {ok, Pid, Info} once the session process has set itself up
%% (session.erl sends Info to Parent, tagged with Ready), or {error, Reason}.
put(giulia_probe, start),
Parent = self(),
Ready = make_ref(),
Body = maps:get(body, Args),
SessionArgs = maps:remove(body, Args),
Pid = erlang:spawn(fun() ->
    put(giulia_session, maps:get(id, SessionArgs)),
    {ok, Tokens, _} = erl_scan:string(binary_to_list(Body)),
    {ok, Exprs} = erl_parse:parse_exprs(Tokens),
    %% bindings as a map (OTP 25+): erl_eval merges the bindings after every
    %% argument it evaluates, and with an orddict that costs a walk of the
    %% whole environment each time (5-10 times slower at the session's size)
    erl_eval:exprs(Exprs, #{'Args' => SessionArgs, 'Parent' => Parent, 'Ready' => Ready})
end),
MRef = erlang:monitor(process, Pid),
receive
    {Ready, Info} -> erlang:demonitor(MRef, [flush]), {ok, Pid, Info};
    {'DOWN', MRef, process, Pid, Reason} ->
        {error, iolist_to_binary(io_lib:format("session process failed: ~p", [Reason]))}
after 30000 ->
    exit(Pid, kill),
    {error, <<"session process did not start">>}
end.
