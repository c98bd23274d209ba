defmodule Nexus.HTTP.Response do
  @moduledoc """
  What controllers return: {status, content_type, iodata}. Helpers for JSON,
  CSV and errors (always `{"error": message}`).
  """

  @type t :: {pos_integer, String.t(), iodata}

  def json(status, term), do: {status, "application/json", Nexus.JSON.encode(term)}
  def error(status, message), do: json(status, %{"error" => message})
  def not_found(what), do: error(404, "#{what} not found")
  def bad_request(message), do: error(400, message)
  def csv(iodata), do: {200, "text/csv; charset=utf-8", iodata}
  def no_content, do: {204, "application/json", ""}

  @doc "Maps a data-layer error to a response."
  def from_error(:not_found, what), do: not_found(what)
  def from_error(:unknown_table, _what), do: not_found("table")
  def from_error({:invalid, message}, _what), do: error(422, message)
  def from_error(reason, _what), do: error(500, "database error: #{inspect(reason)}")
end
