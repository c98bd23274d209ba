defmodule Nexus.CSV do
  @moduledoc "RFC 4180 CSV output: a header line, then one line per row."

  @doc "Encodes `columns` and rows (maps keyed by column) as CSV iodata."
  def encode(columns, rows) do
    header = [Enum.map_join(columns, ",", &field/1), "\r\n"]
    [header | Enum.map(rows, fn row -> [Enum.map_join(columns, ",", &field(row[&1])), "\r\n"] end)]
  end

  defp field(nil), do: ""
  defp field(n) when is_integer(n), do: Integer.to_string(n)
  defp field(f) when is_float(f), do: :erlang.float_to_binary(f, [:short])

  defp field(s) when is_binary(s) do
    if String.contains?(s, [",", "\"", "\r", "\n"]),
      do: "\"" <> String.replace(s, "\"", "\"\"") <> "\"",
      else: s
  end

  defp field(other), do: field(to_string(other))
end
