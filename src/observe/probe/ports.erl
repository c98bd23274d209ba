%% ports.erl - the ports and sockets of the target over a window,
%% read-only: what recon:inet_window/3 and recon:port_types/0 give, and the
%% file descriptors against their limit. Evaluated on the target by
%% erl_eval in the process its rpc server spawns for the call (see
%% dist.h); nothing is loaded, nothing sent to any port but the statistics
%% requests (port_info/2, inet:getstat/1, inet:peername/1, inet:sockname/1).
%%
%% Args: #{window_ms => W, max => N, scan_max => M, cnode => OurNodeName}.
%%
%% Bytes in and out of every port (port_info input/output; for inet sockets
%% inet:getstat recv_oct/send_oct) and, for inet sockets, packets
%% (recv_cnt/send_cnt) are read at the start
%% and the end of the window, the per-port reads handed as external funs to
%% compiled list functions; the `max` ports that moved the most bytes get
%% their owner (with its registered name), local and peer addresses. At most
%% scan_max ports are looked at. sockets of the `socket` module (NIF, not
%% ports) are not covered.
%%
%% Returns {ok, #{count, observer_ports, scanned, window_ms,
%% fds => #{used, max}, kinds, ports => [Map]}}.
Max = maps:get(max, Args),
W = maps:get(window_ms, Args),
%% the observers' own connections (this one's: the cnode of Args; any
%% other Giulia's: giulia_* names) are left out and counted apart
Cnode = maps:get(cnode, Args),
IsObserver = fun(N) -> B = atom_to_binary(N, utf8),
                       B =:= Cnode orelse binary:match(B, <<"giulia_">>) =:= {0, 7} end,
Own = [Ctrl || {N, Ctrl} <- erlang:system_info(dist_ctrl), is_port(Ctrl), IsObserver(N)],
All = erlang:ports(),
Ports = lists:sublist(All -- Own, maps:get(scan_max, Args)),
Dup = fun(X) -> lists:duplicate(length(Ports), X) end,
Names = lists:zipwith(fun erlang:port_info/2, Ports, Dup(name)),
IsInet = fun({name, N}) -> lists:member(N, ["tcp_inet", "udp_inet", "sctp_inet"]);
            (_) -> false end,
Inet = [P || {P, N} <- lists:zip(Ports, Names), IsInet(N)],
Stat = fun(Ps) -> lists:zip(Ps, lists:map(fun inet:getstat/1, Ps)) end,
In0 = lists:zipwith(fun erlang:port_info/2, Ports, Dup(input)),
Out0 = lists:zipwith(fun erlang:port_info/2, Ports, Dup(output)),
Stat0 = Stat(Inet),
T0 = erlang:monotonic_time(microsecond),
timer:sleep(W),
In1 = lists:zipwith(fun erlang:port_info/2, Ports, Dup(input)),
Out1 = lists:zipwith(fun erlang:port_info/2, Ports, Dup(output)),
Stat1 = Stat(Inet),
Us = erlang:monotonic_time(microsecond) - T0,
Delta = fun({_, A}, {_, B}) when is_integer(A), is_integer(B) -> B - A;
           (_, _) -> 0 end,
Stats0 = maps:from_list(Stat0),
Stats1 = maps:from_list(Stat1),
Count = fun(P, Key, Stats) ->
    case maps:get(P, Stats, undefined) of
        {ok, L} -> proplists:get_value(Key, L, 0);
        _ -> 0
    end
end,
%% bytes: a socket's own counters (its driver counts what the process reads
%% in passive mode nowhere else), port_info for every other port
Bytes = fun(P, _, _) when is_map_key(P, Stats0) ->
                {Count(P, recv_oct, Stats1) - Count(P, recv_oct, Stats0),
                 Count(P, send_oct, Stats1) - Count(P, send_oct, Stats0)};
           (_, {I0, I1}, {O0, O1}) -> {Delta(I0, I1), Delta(O0, O1)} end,
Moved = lists:zipwith3(Bytes, Ports, lists:zip(In0, In1), lists:zip(Out0, Out1)),
Ranked = lists:reverse(lists:sort(lists:zip([I + O || {I, O} <- Moved], Ports))),
Top = [P || {_, P} <- lists:sublist(Ranked, Max)],
Index = maps:from_list(lists:zip(Ports, lists:zip(Moved, lists:zip(In1, Out1)))),
Addr = fun({ok, {IP, Port}}) when is_tuple(IP) ->
               unicode:characters_to_binary([inet:ntoa(IP), ":", integer_to_list(Port)]);
          ({ok, Other}) -> unicode:characters_to_binary(io_lib:format("~0tp", [Other]));
          (_) -> null end,
NameOf = fun(Pid) when is_pid(Pid), node(Pid) =:= node() ->
                 case erlang:process_info(Pid, registered_name) of
                     {registered_name, N} when is_atom(N) -> atom_to_binary(N, utf8);
                     _ -> null
                 end;
            (_) -> null end,
Kind = fun("tcp_inet") -> tcp; ("udp_inet") -> udp; ("sctp_inet") -> sctp;
          ("efile") -> file; ("forker") -> forker;
          (N) -> case io_lib:fread("~d/~d", N) of
                     {ok, _, []} -> fd;
                     _ -> case lists:member($/, N) orelse lists:member($\s, N) of
                              true -> spawn;
                              false -> other
                          end
                 end end,
Row = fun(P) ->
    case erlang:port_info(P) of
        undefined -> [];
        Info ->
            Name = proplists:get_value(name, Info, ""),
            Owner = proplists:get_value(connected, Info),
            {{InB, OutB}, {{_, ITot}, {_, OTot}}} = maps:get(P, Index),
            IsSock = maps:is_key(P, Stats0),
            [#{id => list_to_binary(erlang:port_to_list(P)),
               name => unicode:characters_to_binary(lists:sublist(Name, 200)),
               kind => Kind(Name),
               owner => case Owner of
                            O when is_pid(O) -> list_to_binary(pid_to_list(O));
                            _ -> null
                        end,
               owner_name => NameOf(Owner),
               os_pid => case proplists:get_value(os_pid, Info) of
                             undefined -> null;
                             OsPid -> OsPid
                         end,
               local => case IsSock of true -> Addr(inet:sockname(P)); false -> null end,
               peer => case IsSock of true -> Addr(inet:peername(P)); false -> null end,
               input_bytes => InB,
               output_bytes => OutB,
               input_total => case IsSock of
                                  true -> Count(P, recv_oct, Stats1);
                                  false -> ITot
                              end,
               output_total => case IsSock of
                                   true -> Count(P, send_oct, Stats1);
                                   false -> OTot
                               end,
               recv_packets => case IsSock of
                                   true -> Count(P, recv_cnt, Stats1) - Count(P, recv_cnt, Stats0);
                                   false -> null
                               end,
               send_packets => case IsSock of
                                   true -> Count(P, send_cnt, Stats1) - Count(P, send_cnt, Stats0);
                                   false -> null
                               end}]
    end
end,
Kinds = lists:foldl(fun({name, N}, Acc) -> K = Kind(N), maps:put(K, maps:get(K, Acc, 0) + 1, Acc);
                       (_, Acc) -> Acc end, #{}, Names),
Fds = case prim_file:list_dir("/proc/self/fd") of
          {ok, Fs} -> length(Fs) - length(Own);
          _ -> null
      end,
MaxFds = case catch erlang:system_info(check_io) of
             L when is_list(L) ->
                 case lists:keyfind(max_fds, 1, lists:flatten(L)) of
                     {max_fds, MF} -> MF;
                     _ -> null
                 end;
             _ -> null
         end,
{ok, #{count => length(All) - length(Own),
       observer_ports => length(Own),
       scanned => length(Ports),
       window_ms => Us div 1000,
       fds => #{used => Fds, max => MaxFds},
       kinds => Kinds,
       ports => lists:append([Row(P) || P <- Top])}}.
