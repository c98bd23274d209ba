%% apps.erl - the applications of the target, read-only: what observer's
%% "Applications" tab and observer_cli's application view show. Evaluated
%% on the target by erl_eval in the process its rpc server spawns for the
%% call (see dist.h); nothing is loaded.
%%
%% Args: #{app => null | AppText, depth, width, nodes_max, scan_max,
%%         call_timeout_ms, budget_ms}.
%%
%% Without app: every running application with its version and
%% description, and the processes and memory attributed to it (a process
%% belongs to the application whose master is its group leader, as
%% application:get_application/1 decides); the per-process reads are
%% external funs handed to compiled list functions, at most scan_max
%% processes. With app (compared as text with the running applications: no
%% atom is created): its supervision tree from its master's top supervisor,
%% each supervisor asked which_children with a timeout (a stuck supervisor
%% is marked, never waited on for long), at most depth levels, width
%% children of one supervisor and nodes_max nodes in all, and no new call
%% once budget_ms has passed.
%%
%% Returns {ok, #{apps => [...], unattributed => #{...}}} or
%% {ok, #{app, version, tree}} or {error, no_such_application}.
Timeout = maps:get(call_timeout_ms, Args),
Running = case catch application:which_applications(Timeout) of
              L when is_list(L) -> L;
              _ -> []
          end,
Masters = maps:from_list([{Pid, App} || [App, Pid] <- ets:match(ac_tab, {{application_master, '$1'}, '$2'})]),
Text = fun(T) -> unicode:characters_to_binary(io_lib:format("~0tP", [T, 6], [{chars_limit, 200}])) end,
Str = fun(S) -> try unicode:characters_to_binary(S) of
                    B when is_binary(B) -> B;
                    _ -> null
                catch _:_ -> null end end,
case maps:get(app, Args) of
    null ->
        Ps = lists:sublist(erlang:processes(), maps:get(scan_max, Args)),
        Dup = fun(X) -> lists:duplicate(length(Ps), X) end,
        Gls = lists:zipwith(fun erlang:process_info/2, Ps, Dup(group_leader)),
        Mems = lists:zipwith(fun erlang:process_info/2, Ps, Dup(memory)),
        Sums = lists:foldl(fun({{group_leader, G}, {memory, M}}, Acc) ->
                                   {N0, M0} = maps:get(G, Acc, {0, 0}),
                                   maps:put(G, {N0 + 1, M0 + M}, Acc);
                              (_, Acc) -> Acc end,
                           #{}, lists:zip(Gls, Mems)),
        ByApp = maps:fold(fun(G, {N, M}, Acc) ->
                                  case maps:get(G, Masters, none) of
                                      none -> Acc;
                                      App -> maps:put(App, {N, M}, Acc)
                                  end end, #{}, Sums),
        {AttrN, AttrM} = maps:fold(fun(_, {N, M}, {AN, AM}) -> {AN + N, AM + M} end, {0, 0}, ByApp),
        {AllN, AllM} = maps:fold(fun(_, {N, M}, {AN, AM}) -> {AN + N, AM + M} end, {0, 0}, Sums),
        {ok, #{apps => [begin
                            {N, M} = maps:get(App, ByApp, {0, 0}),
                            #{name => atom_to_binary(App, utf8), description => Str(Desc),
                              version => Str(Vsn), processes => N, memory_bytes => M}
                        end || {App, Desc, Vsn} <- Running],
               unattributed => #{processes => AllN - AttrN, memory_bytes => AllM - AttrM},
               processes_scanned => length(Ps)}};
    Want ->
        case [A || {A, _, _} <- Running, atom_to_binary(A, utf8) =:= Want] of
            [] -> {error, no_such_application};
            [App | _] ->
                Depth = maps:get(depth, Args),
                Width = maps:get(width, Args),
                NodesMax = maps:get(nodes_max, Args),
                Deadline = erlang:monotonic_time(millisecond) + maps:get(budget_ms, Args),
                Count = counters:new(1, []),
                PidText = fun(P) when is_pid(P) -> list_to_binary(pid_to_list(P));
                             (A) when is_atom(A) -> atom_to_binary(A, utf8);
                             (_) -> null end,
                NameOf = fun(P) when is_pid(P) ->
                                 case erlang:process_info(P, registered_name) of
                                     {registered_name, N} when is_atom(N) -> atom_to_binary(N, utf8);
                                     _ -> null
                                 end;
                            (_) -> null end,
                Walk = fun W(Sup, Level) ->
                    Late = erlang:monotonic_time(millisecond) > Deadline,
                    case Late orelse counters:get(Count, 1) >= NodesMax of
                        true -> #{cut => true};
                        false ->
                            case catch gen_server:call(Sup, which_children, Timeout) of
                                Kids when is_list(Kids) ->
                                    Shown = lists:sublist(Kids, Width),
                                    #{children_count => length(Kids),
                                      children =>
                                          [begin
                                               counters:add(Count, 1, 1),
                                               IdText = case Id of
                                                            _ when is_atom(Id) -> atom_to_binary(Id, utf8);
                                                            _ -> Text(Id)
                                                        end,
                                               Node = #{id => IdText, pid => PidText(Child),
                                                        name => NameOf(Child), type => Type,
                                                        modules => case Mods of
                                                                       dynamic -> [<<"dynamic">>];
                                                                       _ -> [atom_to_binary(Mo, utf8) || Mo <- lists:sublist(Mods, 3), is_atom(Mo)]
                                                                   end},
                                               case Type =:= supervisor andalso is_pid(Child) of
                                                   true when Level < Depth -> maps:merge(Node, W(Child, Level + 1));
                                                   true -> Node#{cut => true};
                                                   false -> Node
                                               end
                                           end || {Id, Child, Type, Mods} <- Shown]};
                                {'EXIT', {timeout, _}} -> #{error => <<"timeout">>};
                                Other -> #{error => Text(Other)}
                            end
                    end
                end,
                {_, _, Vsn} = lists:keyfind(App, 1, Running),
                %% application_master:get_child/1 (OTP 25 has no
                %% application:get_supervisor/1) waits forever: its request
                %% is sent here and waited on with the timeout
                [[Master]] = ets:match(ac_tab, {{application_master, App}, '$1'}),
                MRef = erlang:monitor(process, Master),
                Tag = make_ref(),
                Master ! {get_child, Tag, self()},
                TopSup = receive
                             {Tag, Reply} -> Reply;
                             {'DOWN', MRef, process, _, _} -> none
                         after Timeout -> none
                         end,
                erlang:demonitor(MRef, [flush]),
                Root = case TopSup of
                           {Top, _} when is_pid(Top) ->
                               maps:merge(#{id => <<"top">>, pid => PidText(Top), name => NameOf(Top),
                                            type => supervisor, modules => []}, Walk(Top, 1));
                           _ -> null
                       end,
                {ok, #{app => atom_to_binary(App, utf8), version => Str(Vsn), tree => Root,
                       nodes => counters:get(Count, 1)}}
        end
end.
