%% Bench workload module (see observe_bench.erl).
-module(observe_bench_a).
-export([work/1]).
work(0) -> ok;
work(N) -> _ = observe_bench_b:step(N), work(N - 1).
