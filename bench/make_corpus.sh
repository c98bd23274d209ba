#!/usr/bin/env bash
# Writes a corpus of real Elixir source for the benchmarks into DIR (created;
# never commit it): one .ex file per module of the Debian elixir package,
# rebuilt from the debug-info chunk of its .beam file with Macro.to_string.
# The definitions come back macro-expanded, so the text is real, compilable-
# looking Elixir (about 9 MB for Elixir 1.14's standard library). The Debian
# package ships no Elixir source for the bench; this is the closest text to
# it on the machine.
#
#   bench/make_corpus.sh [--docs|--contracts] DIR [EBIN_GLOB]
#
# --docs writes the @moduledoc and @doc text of each module's EEP-48 Docs
# chunk (Code.fetch_docs) back above the definitions: what the search
# benchmarks (bench/bench_search.sh) run on.
# --contracts adds, to --docs, what the checks of docs/CHECKS.md read:
# @behaviour (the module's attributes), @callback and @optional_callbacks
# (Code.Typespec.fetch_callbacks, behaviour_info/1), @spec above each
# definition (Code.Typespec.fetch_specs) and @impl true above the callbacks
# of the declared behaviours. The standard library compiles, so every
# missing_callback, orphan_spec or @impl finding on this corpus is a false
# positive of the checks (bench/bench_checks.sh).
#
# EBIN_GLOB defaults to /usr/lib/elixir/lib/*/ebin. Uses both cores.
# needs: elixir
set -euo pipefail
usage="usage: bench/make_corpus.sh [--docs|--contracts] DIR [EBIN_GLOB]"
level=plain
case "${1:-}" in
--docs) level=docs; shift ;;
--contracts) level=contracts; shift ;;
-*) echo "$usage" >&2; exit 2 ;;
esac
out=${1:?$usage}
glob=${2:-/usr/lib/elixir/lib/*/ebin}
mkdir -p "$out"
# shellcheck disable=SC2086
beams=$(ls $glob/*.beam)
OUT="$out" LEVEL="$level" elixir -e '
out = System.get_env("OUT")
level = System.get_env("LEVEL")
docs? = level in ["docs", "contracts"]
contracts? = level == "contracts"
files = IO.read(:stdio, :eof) |> String.split("\n", trim: true)

heredoc = fn attr, text ->
  body = text |> String.replace(~s("""), ~s(\x27\x27\x27)) |> String.trim_trailing()
  "  #{attr} ~S\"\"\"\n" <> (body |> String.split("\n") |> Enum.map_join("\n", &("  " <> &1))) <> "\n  \"\"\"\n"
end

specs_text = fn attr, name, specs ->
  Enum.map_join(specs, "", fn spec ->
    try do
      "  #{attr} " <> Macro.to_string(Code.Typespec.spec_to_quoted(name, spec)) <> "\n"
    rescue
      _ -> ""
    end
  end)
end

callbacks_of = fn b ->
  Code.ensure_loaded(b)
  if function_exported?(b, :behaviour_info, 1), do: b.behaviour_info(:callbacks), else: []
end

# {moduledoc or nil, %{{name, arity} => doc}} from the Docs chunk
docs_of = fn mod ->
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
end

# {attribute lines, callbacks implemented, %{{name, arity} => specs}}
contracts_of = fn mod ->
  Code.ensure_loaded(mod)
  behaviours = Keyword.get_values(mod.module_info(:attributes), :behaviour) |> List.flatten()
  impls = behaviours |> Enum.flat_map(callbacks_of) |> MapSet.new()
  specs = case Code.Typespec.fetch_specs(mod) do {:ok, s} -> Map.new(s); _ -> %{} end
  callbacks =
    case Code.Typespec.fetch_callbacks(mod) do
      {:ok, cbs} ->
        Enum.map_join(cbs, "", fn {{name, _}, s} ->
          name = name |> Atom.to_string() |> String.replace_prefix("MACRO-", "") |> String.to_atom()
          specs_text.("@callback", name, s)
        end)
      _ -> ""
    end
  optional =
    if function_exported?(mod, :behaviour_info, 1) do
      case mod.behaviour_info(:optional_callbacks) do
        [] -> ""
        list -> "  @optional_callbacks " <> Enum.map_join(list, ", ", fn {n, a} -> "#{n}: #{a}" end) <> "\n"
      end
    else
      ""
    end
  attrs = Enum.map_join(behaviours, "", &("  @behaviour " <> inspect(&1) <> "\n")) <> callbacks <> optional
  {attrs <> "\n", impls, specs}
end

rebuild = fn file ->
  with {:ok, {mod, [debug_info: {:debug_info_v1, backend, data}]}} <-
         :beam_lib.chunks(String.to_charlist(file), [:debug_info]),
       {:ok, %{definitions: defs}} <- backend.debug_info(:elixir_v1, mod, data, []) do
    {attrs, impls, specs} = if contracts?, do: contracts_of.(mod), else: {"", MapSet.new(), %{}}
    {moduledoc, docs} = if docs?, do: docs_of.(mod), else: {nil, %{}}
    indent = if docs?, do: "  ", else: ""
    # Definitions the formatter cannot print (some expanded forms) are left out.
    body =
      for {{name, arity}, kind, _meta, clauses} <- defs, {{_m, args, guards, expr}, i} <- Enum.with_index(clauses) do
        head = {name, [], args}
        head =
          case guards do
            [] -> head
            gs -> {:when, [], [head, Enum.reduce(gs, &{:or, [], [&2, &1]})]}
          end
        first = i == 0
        doc = if first and Map.has_key?(docs, {name, arity}), do: heredoc.("@doc", docs[{name, arity}]), else: ""
        spec = if contracts? and first and kind == :def, do: specs_text.("@spec", name, Map.get(specs, {name, arity}, [])), else: ""
        impl = if first and kind == :def and MapSet.member?(impls, {name, arity}), do: "  @impl true\n", else: ""
        try do
          doc <> spec <> impl <> indent <> Macro.to_string({kind, [], [head, [do: expr]]})
        rescue
          _ -> ""
        end
      end
    md = if moduledoc, do: heredoc.("@moduledoc", moduledoc) <> "\n", else: ""
    text = "defmodule #{inspect(mod)} do\n" <> md <> attrs <> Enum.join(body, "\n\n") <> "\nend\n"
    name = mod |> Atom.to_string() |> String.replace(~r/[^A-Za-z0-9_.]/, "_")
    File.write!(Path.join(out, name <> ".ex"), text)
    byte_size(text)
  else
    _ -> 0
  end
end

what = %{"plain" => "source", "docs" => "documented source", "contracts" => "source with contracts"}[level]

total =
  files
  |> Task.async_stream(rebuild, max_concurrency: 2, timeout: :infinity, ordered: false)
  |> Enum.reduce(0, fn {:ok, n}, acc -> acc + n end)

IO.puts("#{length(files)} modules, #{total} bytes of #{what} in #{out}")
' <<<"$beams"
