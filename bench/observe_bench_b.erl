%% Bench workload module (see observe_bench.erl).
-module(observe_bench_b).
-export([step/1]).
step(N) -> square(N) rem 7.
square(N) -> N * N.
