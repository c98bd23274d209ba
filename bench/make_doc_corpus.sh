#!/usr/bin/env bash
# Writes Elixir's standard library as documented source into DIR (created;
# never commit it): one .ex file per module of the Debian elixir package,
# its definitions rebuilt from the debug-info chunk (as bench/make_corpus.sh)
# with the @moduledoc and @doc text of the module's EEP-48 Docs chunk
# (Code.fetch_docs) written back above them. The Debian package ships no
# Elixir source; this is the closest text to it on the machine, and what the
# search benchmarks (bench/bench_search.sh) run on.
#
#   bench/make_doc_corpus.sh DIR [EBIN_GLOB]
#
# EBIN_GLOB defaults to /usr/lib/elixir/lib/*/ebin. Uses both cores.
# needs: elixir
set -euo pipefail
out=${1:?usage: bench/make_doc_corpus.sh DIR [EBIN_GLOB]}
glob=${2:-/usr/lib/elixir/lib/*/ebin}
mkdir -p "$out"
# shellcheck disable=SC2086
beams=$(ls $glob/*.beam)
OUT="$out" elixir -e '
out = System.get_env("OUT")
files = IO.read(:stdio, :eof) |> String.split("\n", trim: true)

heredoc = fn attr, text ->
  body = text |> String.replace(~s("""), ~s(\x27\x27\x27)) |> String.trim_trailing()
  "  #{attr} ~S\"\"\"\n" <> (body |> String.split("\n") |> Enum.map_join("\n", &("  " <> &1))) <> "\n  \"\"\"\n"
end

rebuild = fn file ->
  with {:ok, {mod, [debug_info: {:debug_info_v1, backend, data}]}} <-
         :beam_lib.chunks(String.to_charlist(file), [:debug_info]),
       {:ok, %{definitions: defs}} <- backend.debug_info(:elixir_v1, mod, data, []) do
    {moduledoc, docs} =
      case Code.fetch_docs(mod) do
        {:docs_v1, _, _, _, md, _, entries} ->
          fdocs =
            for {{kind, name, arity}, _, _, %{"en" => text}, _} <- entries,
                kind in [:function, :macro],
                into: %{},
                do: {{name, arity}, text}
          {(match?(%{"en" => _}, md) && md["en"]) || nil, fdocs}
        _ -> {nil, %{}}
      end
    body =
      for {{name, arity}, kind, _meta, clauses} <- defs, {{_m, args, guards, expr}, i} <- Enum.with_index(clauses) do
        head = {name, [], args}
        head =
          case guards do
            [] -> head
            gs -> {:when, [], [head, Enum.reduce(gs, &{:or, [], [&2, &1]})]}
          end
        doc = if i == 0 and Map.has_key?(docs, {name, arity}), do: heredoc.("@doc", docs[{name, arity}]), else: ""
        try do
          doc <> "  " <> Macro.to_string({kind, [], [head, [do: expr]]})
        rescue
          _ -> ""
        end
      end
    md = if moduledoc, do: heredoc.("@moduledoc", moduledoc) <> "\n", else: ""
    text = "defmodule #{inspect(mod)} do\n" <> md <> Enum.join(body, "\n\n") <> "\nend\n"
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

IO.puts("#{length(files)} modules, #{total} bytes of documented source in #{out}")
' <<<"$beams"
