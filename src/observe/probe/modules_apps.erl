%% modules_apps.erl - evaluated on the target by erl_eval (see dist.h).
%% Args: a list of module atom texts as binaries. Each atom is looked up,
%% never created; unknown ones are skipped. Returns {ok, [AppText]} (binaries,
%% sorted, unique): the applications those modules belong to.
Lookup = fun(B) when is_binary(B) ->
                 try erlang:binary_to_existing_atom(B, utf8) of
                     M ->
                         case application:get_application(M) of
                             {ok, A} -> [A];
                             _ -> []
                         end
                 catch
                     error:badarg -> []
                 end;
            (_) -> []
         end,
{ok, [atom_to_binary(A, utf8) || A <- lists:usort(lists:append([Lookup(B) || B <- Args]))]}.
