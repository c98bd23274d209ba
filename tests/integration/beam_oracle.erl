%% beam_oracle.erl - the ground truth for tests/integration/beam.c, computed
%% by OTP itself: exported functions from M:module_info(exports), calls per
%% function from beam_disasm, module call edges from xref (modules mode).
%% It applies the same conventions as src/source/beam.c (docs/BEAM.md):
%% compiler-generated functions skipped, lambda and comprehension bodies
%% folded into the function that defines them, operator BIFs left out.
%%
%% Usage: erl -noshell -pa DIR -run beam_oracle main OUT XREFDIR|none FILE... -s init stop
%% Writes one fact per line to OUT:
%%   X Mod name/arity                    an exported function
%%   C Mod name/arity kind target        a call (remote, local, capture, dynamic)
%%   B Mod name/arity                    a callback of a behaviour (behaviour_info/1)
%%   S Mod name/arity                    a function with a -spec (debug information)
%%   D|H Mod name/arity, MD|MH Mod       documented or hidden (EEP 48 Docs chunk)
%%   M Mod Target                        a module call edge (Erlang modules, xref)
-module(beam_oracle).
-export([main/1]).

main([Out, XrefDir | Files]) ->
    Lines = lists:flatmap(fun file_lines/1, Files) ++ xref_lines(XrefDir),
    ok = file:write_file(Out, unicode:characters_to_binary(Lines)).

display(M) ->
    case atom_to_list(M) of
        "Elixir." ++ Rest when Rest =/= "" -> Rest;
        S -> ":" ++ S
    end.

skipped(_, _, module_info, A) when A =< 1 -> true;
skipped(_, _, behaviour_info, 1) -> true;
skipped(true, _, '__info__', 1) -> true;
skipped(true, _, '__struct__', A) when A =< 1 -> true;
skipped(true, _, '__impl__', 1) -> true;
skipped(true, true, N, 1) -> lists:member(N, ['__protocol__', impl_for, 'impl_for!']);
skipped(_, _, _, _) -> false.

fname(true, N, A) ->
    case atom_to_list(N) of
        "MACRO-" ++ Name when A >= 1 -> io_lib:format("~ts/~b", [Name, A - 1]);
        Name -> io_lib:format("~ts/~b", [Name, A])
    end;
fname(false, N, A) -> io_lib:format("~ts/~b", [atom_to_list(N), A]).

generated(N) -> hd(atom_to_list(N) ++ " ") =:= $-.

parent(N, Names) ->
    S0 = tl(atom_to_list(N)),
    S = case S0 of "inlined-" ++ R -> R; _ -> S0 end,
    case re:run(S, "^(.+?)/([0-9]{1,3})-", [{capture, all_but_first, list}, unicode]) of
        {match, [P, A]} ->
            Key = {list_to_atom(P), list_to_integer(A)},
            case maps:is_key(Key, Names) of true -> Key; false -> none end;
        nomatch -> none
    end.

owner({N, A} = F, Skip, Exported, Names) ->
    case Skip(N, A) of
        true -> none;
        false ->
            case generated(N) andalso not maps:is_key(F, Exported) of
                false -> F;
                true ->
                    case chase(parent(N, Names), Names, 0) of
                        none -> F;
                        {PN, PA} = P -> case Skip(PN, PA) of true -> none; false -> P end
                    end
            end
    end.

chase(none, _, _) -> none;
chase(P, _, 8) -> P;
chase({PN, _} = P, Names, Hops) ->
    case generated(PN) of
        true -> chase(parent(PN, Names), Names, Hops + 1);
        false -> P
    end.

operator(erlang, N) ->
    [C | _] = atom_to_list(N),
    not (C >= $a andalso C =< $z) orelse
        lists:member(N, ['div', 'rem', 'band', 'bor', 'bxor', 'bsl', 'bsr', 'bnot',
                         'and', 'or', 'xor', 'not']);
operator(_, _) -> false.

instr(I) ->
    case I of
        {call, _, {_, F, A}} -> [{local, F, A}];
        {call_last, _, {_, F, A}, _} -> [{local, F, A}];
        {call_only, _, {_, F, A}} -> [{local, F, A}];
        {call_ext, _, {extfunc, M, F, A}} -> [{remote, M, F, A}];
        {call_ext_last, _, {extfunc, M, F, A}, _} -> [{remote, M, F, A}];
        {call_ext_only, _, {extfunc, M, F, A}} -> [{remote, M, F, A}];
        {bif, N, _, Args, _} -> [{remote, erlang, N, length(Args)}];
        {gc_bif, N, _, _, Args, _} -> [{remote, erlang, N, length(Args)}];
        {apply, A} -> [{dynamic, A}];
        {apply_last, A, _} -> [{dynamic, A}];
        {make_fun2, {_, F, A}, _, _, _} -> [{lambda, F, A}];
        {make_fun3, {_, F, A}, _, _, _, _} -> [{lambda, F, A}];
        _ -> []
    end ++ literals(I).

literals({literal, T}) -> funs(T);
literals(T) when is_tuple(T) -> literals(tuple_to_list(T));
literals(L) when is_list(L) -> lists:flatmap(fun literals/1, L);
literals(_) -> [].

funs(F) when is_function(F) ->
    case erlang:fun_info(F, type) of
        {type, external} ->
            {module, M} = erlang:fun_info(F, module),
            {name, N} = erlang:fun_info(F, name),
            {arity, A} = erlang:fun_info(F, arity),
            [{capture, M, N, A}];
        _ -> []
    end;
funs(T) when is_tuple(T) -> funs(tuple_to_list(T));
funs(L) when is_list(L) -> funs_list(L);
funs(M) when is_map(M) -> funs(maps:to_list(M));
funs(_) -> [].

funs_list([H | T]) -> funs(H) ++ funs_list(T);
funs_list(_) -> [].

file_lines(File) ->
    {beam_file, Mod, _, Attrs, _, Code} = beam_disasm:file(File),
    Elixir = lists:prefix("Elixir.", atom_to_list(Mod)),
    Protocol = lists:keymember('__protocol__', 1, Attrs),
    Skip = fun(N, A) -> skipped(Elixir, Protocol, N, A) end,
    Disp = display(Mod),
    {module, Mod} = code:ensure_loaded(Mod),
    ExportList = Mod:module_info(exports),
    Exported = maps:from_list([{E, true} || E <- ExportList]),
    X = [io_lib:format("X ~ts ~ts~n", [Disp, fname(Elixir, N, A)])
         || {N, A} <- ExportList, not Skip(N, A)],
    B = case maps:is_key({behaviour_info, 1}, Exported) andalso not Protocol of
            true -> [io_lib:format("B ~ts ~ts~n", [Disp, fname(Elixir, N, A)])
                     || {N, A} <- Mod:behaviour_info(callbacks)];
            false -> []
        end,
    Names = maps:from_list([{{N, A}, true} || {function, N, A, _, _} <- Code]),
    C = [begin
             {ON, OA} = O,
             io_lib:format("C ~ts ~ts ~ts~n", [Disp, fname(Elixir, ON, OA), call(Call, Disp)])
         end
         || {function, N, A, _, Is} <- Code,
            O <- [owner({N, A}, Skip, Exported, Names)], O =/= none,
            Call <- lists:flatmap(fun instr/1, Is),
            keep(Call, Skip)],
    Kept = fun(N, A) ->
                   not Skip(N, A) andalso
                       not (generated(N) andalso not maps:is_key({N, A}, Exported))
           end,
    lists:usort(X ++ B ++ C ++ specs(File, Mod, Disp, Elixir, Names, Kept)
                ++ docs(File, Disp, Names, Kept)).

%% -spec attributes, from the debug information as the compiler's backend
%% gives it in Erlang abstract format (erl_abstract_code or elixir_erl).
specs(File, Mod, Disp, Elixir, Names, Kept) ->
    Forms = case beam_lib:chunks(File, [debug_info]) of
                {ok, {_, [{debug_info, {debug_info_v1, Backend, Data}}]}} ->
                    case catch Backend:debug_info(erlang_v1, Mod, Data, []) of
                        {ok, Fs} -> Fs;
                        _ -> []
                    end;
                _ -> []
            end,
    [io_lib:format("S ~ts ~ts~n", [Disp, fname(Elixir, N, A)])
     || {attribute, _, spec, {Key, _}} <- Forms, {N, A} <- [spec_key(Key)],
        maps:is_key({N, A}, Names), Kept(N, A)].

spec_key({N, A}) -> {N, A};
spec_key({_, N, A}) -> {N, A}.

%% EEP 48 docs from the Docs chunk: D documented, H hidden; MD/MH the module.
docs(File, Disp, Names, Kept) ->
    case beam_lib:chunks(File, ["Docs"]) of
        {ok, {_, [{"Docs", Bin}]}} ->
            {docs_v1, _, _, _, MD, _, Docs} = binary_to_term(Bin),
            doc_line("M", Disp, "", MD) ++
                [doc_line("", Disp, io_lib:format(" ~ts/~b", [atom_to_list(N), A]), Doc)
                 || {{K, N, A}, _, _, Doc, _} <- Docs, K =:= function orelse K =:= macro,
                    {FN, FA} <- [case K of
                                     function -> {N, A};
                                     macro -> {list_to_atom("MACRO-" ++ atom_to_list(N)), A + 1}
                                 end],
                    maps:is_key({FN, FA}, Names), Kept(FN, FA)];
        _ -> []
    end.

doc_line(P, Disp, Suffix, Doc) when is_map(Doc), map_size(Doc) > 0 ->
    [io_lib:format("~sD ~ts~ts~n", [P, Disp, Suffix])];
doc_line(P, Disp, Suffix, hidden) ->
    [io_lib:format("~sH ~ts~ts~n", [P, Disp, Suffix])];
doc_line(_, _, _, _) -> [].

keep({remote, M, F, _}, _) -> not operator(M, F);
keep({local, F, A}, Skip) -> not generated(F) andalso not Skip(F, A);
keep({lambda, F, A}, Skip) -> not generated(F) andalso not Skip(F, A);
keep(_, _) -> true.

call({remote, M, F, A}, _) -> io_lib:format("remote ~ts.~ts/~b", [display(M), atom_to_list(F), A]);
call({local, F, A}, D) -> io_lib:format("local ~ts.~ts/~b", [D, atom_to_list(F), A]);
call({lambda, F, A}, D) -> io_lib:format("capture ~ts.~ts/~b", [D, atom_to_list(F), A]);
call({capture, M, F, A}, _) -> io_lib:format("capture ~ts.~ts/~b", [display(M), atom_to_list(F), A]);
call({dynamic, A}, _) -> io_lib:format("dynamic ?/~b", [A]).

xref_lines("none") -> [];
xref_lines(Dir) ->
    {ok, _} = xref:start(beam_oracle_xref, [{xref_mode, modules}]),
    %% builtins: calls to BIFs (ets, maps, os...) are calls too
    xref:set_default(beam_oracle_xref, [{builtins, true}]),
    xref:set_default(beam_oracle_xref, [{warnings, false}, {verbose, false}]),
    {ok, Mods} = xref:add_directory(beam_oracle_xref, Dir),
    {ok, Edges} = xref:q(beam_oracle_xref, "ME"),
    xref:stop(beam_oracle_xref),
    Own = maps:from_list([{M, true} || M <- Mods]),
    lists:usort([io_lib:format("M ~ts ~ts~n", [display(F), display(T)])
                 || {F, T} <- Edges, F =/= T, T =/= erlang, maps:is_key(F, Own),
                    not lists:prefix("Elixir.", atom_to_list(F))]).
