defmodule Nexus.Controllers.Search do
  @moduledoc """
  GET /api/search?table=T&q=TERM&limit=N: rows of T whose searchable
  columns contain TERM (case-insensitive).
  """
  alias Nexus.{Params, Repo, Router, View}
  alias Nexus.HTTP.Response
  alias Nexus.Registry.TableInfo

  def search(req) do
    with {:ok, table} <- Params.string(req.query, "table", 64),
         {:ok, term} <- Params.string(req.query, "q", 100),
         {:ok, limit} <- Params.int(req.query, "limit", 20, 1, 100) do
      Router.with_table(table, fn info -> run(info, term, limit) end)
    else
      {:error, message} -> Response.bad_request(message)
    end
  end

  defp run(info, term, limit) do
    case Repo.all(info.name, search: {TableInfo.searchable(info), term}, limit: limit) do
      {:ok, rows} -> Response.json(200, %{"data" => View.render_many(info.name, rows), "q" => term})
      {:error, reason} -> Response.from_error(reason, info.name)
    end
  end
end
