%% app_modules.erl - evaluated on the target by erl_eval (see dist.h).
%% Args: an application name as a binary. The atom is looked up, never
%% created. Returns {ok, [ModuleAtomText]} (binaries) or {error, Reason}.
try erlang:binary_to_existing_atom(Args, utf8) of
    App ->
        case application:get_key(App, modules) of
            {ok, Modules} when is_list(Modules) ->
                {ok, [atom_to_binary(M, utf8) || M <- Modules, is_atom(M)]};
            _ ->
                {error, no_such_application}
        end
catch
    error:badarg -> {error, no_such_application}
end.
