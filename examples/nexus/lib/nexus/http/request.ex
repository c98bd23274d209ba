defmodule Nexus.HTTP.Request do
  @moduledoc """
  A request as Nexus sees it, built from the `mod` record that `:inets`
  httpd hands to its callback modules (or by the batch controller).
  """
  require Record
  Record.defrecordp(:mod, Record.extract(:mod, from_lib: "inets/include/httpd.hrl"))

  defstruct method: "GET", path: "/", segments: [], query: %{}, headers: %{}, body: "", id: nil

  @type t :: %__MODULE__{}

  @doc "From httpd's mod record."
  def from_mod(mod_record) do
    uri = mod_record |> mod(:request_uri) |> List.to_string()
    headers = for {k, v} <- mod(mod_record, :parsed_header), into: %{}, do: {List.to_string(k), List.to_string(v)}

    new(
      mod_record |> mod(:method) |> List.to_string(),
      uri,
      headers,
      mod_record |> mod(:entity_body) |> body()
    )
  end

  @doc "From parts (method, URI with query string, headers, body)."
  def new(method, uri, headers, body) do
    {path, query} =
      case String.split(uri, "?", parts: 2) do
        [path, qs] -> {path, URI.decode_query(qs)}
        [path] -> {path, %{}}
      end

    %__MODULE__{
      method: String.upcase(method),
      path: path,
      segments: String.split(path, "/", trim: true) |> Enum.map(&URI.decode/1),
      query: query,
      headers: headers,
      body: body,
      id: :erlang.unique_integer([:positive])
    }
  end

  defp body(list) when is_list(list), do: :erlang.list_to_binary(list)
  defp body(bin) when is_binary(bin), do: bin
  defp body(_), do: ""
end
