defmodule Nexus.Controllers.Export do
  @moduledoc "GET /api/export/:table.csv?limit=N: the table as CSV, by primary key."
  alias Nexus.{Params, Repo}
  alias Nexus.HTTP.Response
  alias Nexus.Registry.TableInfo

  def csv(req, info) do
    with {:ok, limit} <- Params.int(req.query, "limit", 500, 1, 1_000),
         {:ok, rows} <- Repo.all(info.name, limit: limit, order_by: info.primary_key) do
      Response.csv(Nexus.CSV.encode(TableInfo.column_names(info), rows))
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, info.name)
    end
  end
end
