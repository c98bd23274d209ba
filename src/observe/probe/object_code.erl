%% object_code.erl - evaluated on the target by erl_eval (see dist.h).
%% Args: the module's atom text as a binary. The atom is looked up, never
%% created. Returns {ok, ObjectCode, Filename} (binaries) or {error, Reason}.
try erlang:binary_to_existing_atom(Args, utf8) of
    Module ->
        case code:get_object_code(Module) of
            {Module, Code, File} when is_binary(Code) ->
                {ok, Code, unicode:characters_to_binary(File)};
            _ ->
                {error, no_object_code}
        end
catch
    error:badarg -> {error, no_such_module}
end.
