%% alloc.erl - the memory allocators of the target, read-only: the figures
%% of recon_alloc:fragmentation(current) and recon_alloc:cache_hit_rates/0.
%% Evaluated on the target by erl_eval in the process its rpc server spawns
%% for the call (see dist.h); nothing is loaded, nothing is changed.
%%
%% Args: #{max => N}: instances listed, worst first.
%%
%% For each instance of each alloc_util allocator (erlang:system_info(
%% alloc_util_allocators)), from erlang:system_info({allocator, A}): the
%% current sizes of the blocks in use and of the carriers holding them, for
%% single-block (sbcs) and multi-block (mbcs) carriers. Blocks are summed
%% over the block types an instance holds (OTP 23+: {blocks, [{Type,
%% [{count, ..}, {size, Cur, ..}]}]}; before: {blocks_size, Cur, ..}).
%% usage = blocks / carriers (1.0 when both are 0, as recon counts it);
%% instances are ranked by recon's weight: the carrier bytes not used,
%% sbcs + mbcs. The mbcs_pool (carriers migrating between instances) is
%% left out, as recon leaves it out. Cache hit rates: per mseg_alloc
%% instance, cache_hits against mseg_alloc calls (giga and ones).
%%
%% Returns {ok, #{allocators, instances, types => [Map], cache => [Map],
%% carriers_bytes, blocks_bytes}}.
Max = maps:get(max, Args),
Allocs = try erlang:system_info(alloc_util_allocators) catch _:_ -> [] end,
Cur = fun(T) when is_tuple(T), tuple_size(T) >= 2 -> element(2, T);
         (_) -> 0 end,
Blocks = fun(L) ->
    case lists:keyfind(blocks, 1, L) of
        {blocks, Types} when is_list(Types) ->
            lists:sum([Cur(lists:keyfind(size, 1, V)) || {_, V} <- Types, is_list(V)]);
        _ -> Cur(lists:keyfind(blocks_size, 1, L))
    end
end,
Carriers = fun(L) -> Cur(lists:keyfind(carriers_size, 1, L)) end,
Usage = fun(0, 0) -> 1.0; (_, 0) -> 1.0; (B, C) -> B / C end,
Part = fun(Key, Props) ->
    case lists:keyfind(Key, 1, Props) of
        {Key, L} when is_list(L) -> {Blocks(L), Carriers(L)};
        _ -> {0, 0}
    end
end,
Rows = lists:append(
    [case erlang:system_info({allocator, A}) of
         Insts when is_list(Insts) ->
             [begin
                  {SB, SC} = Part(sbcs, Props),
                  {MB, MC} = Part(mbcs, Props),
                  SU = Usage(SB, SC),
                  MU = Usage(MB, MC),
                  {(1.0 - SU) * SC + (1.0 - MU) * MC,
                   #{allocator => A, instance => N,
                     sbcs_blocks_bytes => SB, sbcs_carriers_bytes => SC, sbcs_usage => SU,
                     mbcs_blocks_bytes => MB, mbcs_carriers_bytes => MC, mbcs_usage => MU,
                     unused_bytes => (SC - SB) + (MC - MB)}}
              end || {instance, N, Props} <- Insts, is_list(Props)];
         _ -> []
     end || A <- Allocs]),
Ranked = [R || {_, R} <- lists:reverse(lists:keysort(1, Rows))],
Types = [begin
             Mine = [R || R <- Ranked, maps:get(allocator, R) =:= A],
             Sum = fun(K) -> lists:sum([maps:get(K, R) || R <- Mine]) end,
             B = Sum(sbcs_blocks_bytes) + Sum(mbcs_blocks_bytes),
             C = Sum(sbcs_carriers_bytes) + Sum(mbcs_carriers_bytes),
             #{allocator => A, instances => length(Mine),
               blocks_bytes => B, carriers_bytes => C, usage => Usage(B, C),
               sbcs_blocks_bytes => Sum(sbcs_blocks_bytes),
               sbcs_carriers_bytes => Sum(sbcs_carriers_bytes),
               mbcs_blocks_bytes => Sum(mbcs_blocks_bytes),
               mbcs_carriers_bytes => Sum(mbcs_carriers_bytes)}
         end || A <- Allocs],
Cache = case catch erlang:system_info({allocator, mseg_alloc}) of
            MInsts when is_list(MInsts) ->
                lists:append(
                  [case lists:keyfind(memkind, 1, Props) of
                       {memkind, Mem} when is_list(Mem) ->
                           St = proplists:get_value(status, Mem, []),
                           Cl = proplists:get_value(calls, Mem, []),
                           Hits = case lists:keyfind(cache_hits, 1, St) of
                                      {_, H} -> H;
                                      _ -> 0
                                  end,
                           Calls = case lists:keyfind(mseg_alloc, 1, Cl) of
                                       {_, Giga, Ones} -> Giga * 1000000000 + Ones;
                                       _ -> 0
                                   end,
                           [#{instance => N, hits => Hits, calls => Calls,
                              hit_rate => Usage(Hits, Calls)}];
                       _ -> []
                   end || {instance, N, Props} <- MInsts, is_list(Props)]);
            _ -> []
        end,
{ok, #{allocators => length(Allocs),
       instances => length(Ranked),
       blocks_bytes => lists:sum([maps:get(blocks_bytes, T) || T <- Types]),
       carriers_bytes => lists:sum([maps:get(carriers_bytes, T) || T <- Types]),
       types => lists:reverse(lists:sort(fun(X, Y) -> maps:get(carriers_bytes, X) =< maps:get(carriers_bytes, Y) end, Types)),
       rows => lists:sublist(Ranked, Max),
       cache => Cache}}.
