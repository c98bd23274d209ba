#!/usr/bin/env escript
%% lint_probes.escript - make lint's check of src/observe/probe/*.erl.
%%
%% A probe is a sequence of Erlang expressions, not a module: it is evaluated
%% on the target by erl_eval, so the compiler never sees it and a mistake
%% would only show when an integration test evaluates it on a real node. This
%% parses each file as erl_eval will, and runs erl_lint over it with the
%% bindings the observer gives it (Args for every probe; Parent and Ready too
%% for the session, which session_start.erl evaluates): a syntax error, an
%% unbound variable, an unsafe or unused variable, or a call of a local
%% function (erl_eval has none to call) fails, naming the file and line.
%% needs: erlang-base
-mode(compile).

main(Files) ->
    Bad = lists:sum([check(F) || F <- Files]),
    case Bad of
        0 -> ok;
        _ -> halt(1)
    end.

bindings(File) ->
    case filename:basename(File) of
        "session.erl" -> [{'Args', #{}}, {'Parent', self()}, {'Ready', make_ref()}];
        _ -> [{'Args', <<>>}]
    end.

check(File) ->
    {ok, Bin} = file:read_file(File),
    case erl_scan:string(binary_to_list(Bin), 1) of
        {ok, Tokens, _} ->
            case erl_parse:parse_exprs(Tokens) of
                {ok, Exprs} -> lint(File, Exprs);
                {error, {Line, Mod, What}} -> report(File, Line, Mod:format_error(What))
            end;
        {error, {Line, Mod, What}, _} ->
            report(File, Line, Mod:format_error(What))
    end.

lint(File, Exprs) ->
    Lint = case erl_lint:exprs(Exprs, bindings(File)) of
               {ok, Warnings} -> issues(File, Warnings);
               {error, Errors, Warnings} -> issues(File, Errors) + issues(File, Warnings)
           end,
    Lint + local_calls(File, Exprs).

issues(File, ByFile) ->
    lists:sum([report(File, line(Pos), Mod:format_error(What))
               || {_, List} <- ByFile, {Pos, Mod, What} <- List]).

%% erl_lint:exprs/2 takes a call of an undefined local function for a call
%% of the shell's; erl_eval would fail on it at run time.
local_calls(File, Exprs) ->
    Calls = lists:usort(lists:flatten([locals(E) || E <- Exprs])),
    lists:sum([report(File, L, io_lib:format("call of the local function ~p/~b: a probe has no "
                                             "module (write erlang:~p/~b or a fun)",
                                             [F, A, F, A]))
               || {L, F, A} <- Calls, not erl_internal:bif(F, A)]).

locals({call, Pos, {atom, _, F}, Args}) ->
    [{line(Pos), F, length(Args)} | locals(Args)];
locals(T) when is_tuple(T) -> locals(tuple_to_list(T));
locals(L) when is_list(L) -> [locals(E) || E <- L];
locals(_) -> [].

line(Pos) when is_integer(Pos) -> Pos;
line({Line, _}) -> Line;
line(_) -> 0.

report(File, Line, Text) ->
    io:format(standard_error, "~s:~b: ~s~n", [File, Line, Text]),
    1.
