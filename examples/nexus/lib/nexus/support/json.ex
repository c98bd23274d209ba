defmodule Nexus.JSON do
  @moduledoc """
  A small JSON encoder and decoder (OTP 25 has none and Nexus uses no hex
  packages). Objects decode to maps with string keys, `null` to nil.
  Decoding is bounded: nesting deeper than 64 levels is refused.
  """

  @max_depth 64

  # -- Encoding ----------------------------------------------------------------

  @doc "Encodes a term as JSON iodata; raises ArgumentError on what JSON cannot hold."
  def encode(nil), do: "null"
  def encode(true), do: "true"
  def encode(false), do: "false"
  def encode(n) when is_integer(n), do: Integer.to_string(n)
  def encode(f) when is_float(f), do: :erlang.float_to_binary(f, [:short])
  def encode(a) when is_atom(a), do: string(Atom.to_string(a))
  def encode(s) when is_binary(s), do: string(s)

  def encode(map) when is_map(map) do
    pairs = Enum.map(map, fn {k, v} -> [string(key(k)), ?:, encode(v)] end)
    [?{, Enum.intersperse(pairs, ?,), ?}]
  end

  def encode(list) when is_list(list), do: [?[, Enum.intersperse(Enum.map(list, &encode/1), ?,), ?]]
  def encode(other), do: raise(ArgumentError, "cannot encode #{inspect(other)} as JSON")

  @doc "Encodes to a binary."
  def encode!(term), do: IO.iodata_to_binary(encode(term))

  defp key(k) when is_binary(k), do: k
  defp key(k) when is_atom(k), do: Atom.to_string(k)
  defp key(k) when is_integer(k), do: Integer.to_string(k)

  defp string(s), do: [?", escape(s, 0, s, []), ?"]

  # Copies runs of plain bytes in one piece; escapes the rest.
  defp escape(<<>>, _len, _orig, acc), do: Enum.reverse(acc)

  defp escape(<<c, rest::binary>>, _len, _orig, acc) when c in [?", ?\\] or c < 0x20 do
    escape(rest, 0, rest, [escape_char(c) | acc])
  end

  defp escape(bin, _len, _orig, acc) do
    plain_len = plain_prefix(bin, 0)
    <<plain::binary-size(plain_len), rest::binary>> = bin
    escape(rest, 0, rest, [plain | acc])
  end

  defp plain_prefix(<<c, rest::binary>>, n) when c not in [?", ?\\] and c >= 0x20, do: plain_prefix(rest, n + 1)
  defp plain_prefix(_, n), do: n

  defp escape_char(?"), do: "\\\""
  defp escape_char(?\\), do: "\\\\"
  defp escape_char(?\n), do: "\\n"
  defp escape_char(?\r), do: "\\r"
  defp escape_char(?\t), do: "\\t"

  defp escape_char(c) do
    hex = Integer.to_string(c, 16)
    "\\u" <> String.duplicate("0", 4 - byte_size(hex)) <> hex
  end

  # -- Decoding ----------------------------------------------------------------

  @doc "Decodes a JSON text: {:ok, term} or {:error, reason}."
  def decode(text) when is_binary(text) do
    case value(skip_ws(text), 0) do
      {:ok, term, rest} ->
        case skip_ws(rest) do
          "" -> {:ok, term}
          _ -> {:error, "trailing characters after the JSON value"}
        end

      {:error, _} = error ->
        error
    end
  catch
    {:json_error, reason} -> {:error, reason}
  end

  defp value(_text, depth) when depth > @max_depth, do: {:error, "JSON nested too deeply"}
  defp value(<<"null", rest::binary>>, _), do: {:ok, nil, rest}
  defp value(<<"true", rest::binary>>, _), do: {:ok, true, rest}
  defp value(<<"false", rest::binary>>, _), do: {:ok, false, rest}
  defp value(<<?", rest::binary>>, _), do: decode_string(rest, [])
  defp value(<<?{, rest::binary>>, depth), do: object(skip_ws(rest), depth + 1, [])
  defp value(<<?[, rest::binary>>, depth), do: array(skip_ws(rest), depth + 1, [])
  defp value(<<c, _::binary>> = text, _) when c == ?- or c in ?0..?9, do: number(text)
  defp value("", _), do: {:error, "unexpected end of JSON"}
  defp value(_, _), do: {:error, "unexpected character in JSON"}

  defp object(<<?}, rest::binary>>, _depth, []), do: {:ok, %{}, rest}

  defp object(<<?", rest::binary>>, depth, acc) do
    with {:ok, key, rest} <- decode_string(rest, []),
         <<?:, rest::binary>> <- skip_ws(rest),
         {:ok, val, rest} <- value(skip_ws(rest), depth) do
      case skip_ws(rest) do
        <<?,, rest::binary>> -> object(skip_ws(rest), depth, [{key, val} | acc])
        <<?}, rest::binary>> -> {:ok, Map.new([{key, val} | acc]), rest}
        _ -> {:error, "expected , or } in object"}
      end
    else
      {:error, _} = error -> error
      _ -> {:error, "expected : after object key"}
    end
  end

  defp object(_, _, _), do: {:error, "expected a string key in object"}

  defp array(<<?], rest::binary>>, _depth, []), do: {:ok, [], rest}

  defp array(text, depth, acc) do
    with {:ok, val, rest} <- value(text, depth) do
      case skip_ws(rest) do
        <<?,, rest::binary>> -> array(skip_ws(rest), depth, [val | acc])
        <<?], rest::binary>> -> {:ok, Enum.reverse([val | acc]), rest}
        _ -> {:error, "expected , or ] in array"}
      end
    end
  end

  defp decode_string(<<?", rest::binary>>, acc), do: {:ok, IO.iodata_to_binary(Enum.reverse(acc)), rest}
  defp decode_string(<<?\\, ?u, hex::binary-size(4), rest::binary>>, acc), do: unicode(hex, rest, acc)
  defp decode_string(<<?\\, c, rest::binary>>, acc), do: decode_string(rest, [unescape(c) | acc])
  defp decode_string(<<c, _::binary>>, _acc) when c < 0x20, do: {:error, "control character in string"}

  defp decode_string(<<c::utf8, rest::binary>>, acc), do: decode_string(rest, [<<c::utf8>> | acc])
  defp decode_string(<<>>, _acc), do: {:error, "unterminated string"}
  defp decode_string(_, _acc), do: {:error, "invalid UTF-8 in string"}

  defp unescape(?"), do: ?"
  defp unescape(?\\), do: ?\\
  defp unescape(?/), do: ?/
  defp unescape(?b), do: ?\b
  defp unescape(?f), do: ?\f
  defp unescape(?n), do: ?\n
  defp unescape(?r), do: ?\r
  defp unescape(?t), do: ?\t
  defp unescape(_), do: throw({:json_error, "bad escape in string"})

  defp unicode(hex, rest, acc) do
    case Integer.parse(hex, 16) do
      {hi, ""} when hi in 0xD800..0xDBFF ->
        case rest do
          <<?\\, ?u, lo_hex::binary-size(4), rest2::binary>> ->
            case Integer.parse(lo_hex, 16) do
              {lo, ""} when lo in 0xDC00..0xDFFF ->
                cp = 0x10000 + (hi - 0xD800) * 0x400 + (lo - 0xDC00)
                decode_string(rest2, [<<cp::utf8>> | acc])

              _ ->
                {:error, "bad surrogate pair"}
            end

          _ ->
            {:error, "lone surrogate"}
        end

      {cp, ""} when cp in 0xDC00..0xDFFF ->
        {:error, "lone surrogate"}

      {cp, ""} ->
        decode_string(rest, [<<cp::utf8>> | acc])

      _ ->
        {:error, "bad \\u escape"}
    end
  end

  defp number(text) do
    {num_text, rest} = take_number(text, [])

    cond do
      num_text == "" or num_text == "-" ->
        {:error, "bad number"}

      String.contains?(num_text, [".", "e", "E"]) ->
        case Float.parse(num_text) do
          {f, ""} -> {:ok, f, rest}
          _ -> {:error, "bad number"}
        end

      byte_size(num_text) > 20 ->
        {:error, "number too large"}

      true ->
        case Integer.parse(num_text) do
          {n, ""} -> {:ok, n, rest}
          _ -> {:error, "bad number"}
        end
    end
  end

  defp take_number(<<c, rest::binary>>, acc) when c in ?0..?9 or c in [?-, ?+, ?., ?e, ?E],
    do: take_number(rest, [c | acc])

  defp take_number(rest, acc), do: {acc |> Enum.reverse() |> List.to_string(), rest}

  defp skip_ws(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip_ws(rest)
  defp skip_ws(text), do: text
end
