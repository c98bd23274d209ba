#!/usr/bin/env bash
# Writes a corpus of real Elixir source for the benchmarks into DIR (created;
# never commit it): one .ex file per module of the Debian elixir package,
# rebuilt from the debug-info chunk of its .beam file with Macro.to_string.
# The definitions come back macro-expanded, so the text is real, compilable-
# looking Elixir (about 9 MB for Elixir 1.14's standard library).
#
#   bench/make_corpus.sh DIR [EBIN_GLOB]
#
# EBIN_GLOB defaults to /usr/lib/elixir/lib/*/ebin. Uses both cores.
set -euo pipefail
out=${1:?usage: bench/make_corpus.sh DIR [EBIN_GLOB]}
glob=${2:-/usr/lib/elixir/lib/*/ebin}
mkdir -p "$out"
# shellcheck disable=SC2086
beams=$(ls $glob/*.beam)
OUT="$out" elixir -e '
out = System.get_env("OUT")
files = IO.read(:stdio, :eof) |> String.split("\n", trim: true)

rebuild = fn file ->
  with {:ok, {mod, [debug_info: {:debug_info_v1, backend, data}]}} <-
         :beam_lib.chunks(String.to_charlist(file), [:debug_info]),
       {:ok, %{definitions: defs}} <- backend.debug_info(:elixir_v1, mod, data, []) do
    # Definitions the formatter cannot print (some expanded forms) are left out.
    body =
      for {{name, _arity}, kind, _meta, clauses} <- defs, {_m, args, guards, expr} <- clauses do
        head = {name, [], args}
        head =
          case guards do
            [] -> head
            gs -> {:when, [], [head, Enum.reduce(gs, &{:or, [], [&2, &1]})]}
          end
        try do
          Macro.to_string({kind, [], [head, [do: expr]]})
        rescue
          _ -> ""
        end
      end
    text = "defmodule #{inspect(mod)} do\n" <> Enum.join(body, "\n\n") <> "\nend\n"
    name = mod |> Atom.to_string() |> String.replace(~r/[^A-Za-z0-9_.]/, "_")
    File.write!(Path.join(out, name <> ".ex"), text)
    byte_size(text)
  else
    _ -> 0
  end
end

total =
  files
  |> Task.async_stream(rebuild, max_concurrency: 2, timeout: :infinity, ordered: false)
  |> Enum.reduce(0, fn {:ok, n}, acc -> acc + n end)

IO.puts("#{length(files)} modules, #{total} bytes of source in #{out}")
' <<<"$beams"
