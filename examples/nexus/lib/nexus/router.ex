defmodule Nexus.Router do
  @moduledoc """
  Routes a request to its controller, times it, logs it, and turns crashes
  into 500s. Every route that names a table looks it up in
  `Nexus.Registry.TableRegistry` first.

      GET    /health
      GET    /api/tables
      GET    /api/search?table=T&q=TERM&limit=N
      GET    /api/stats/:table?op=count|sum|avg|min|max&field=F&group_by=G
      GET    /api/export/:table.csv
      POST   /api/batch                 {"requests": [{"method","path","body"}]}
      GET    /api/:table?limit=&offset=&order_by=&desc=
      GET    /api/:table/:id
      POST   /api/:table                {column: value}
      PUT    /api/:table/:id            {column: value}   (PATCH too)
      DELETE /api/:table/:id
  """
  alias Nexus.Controllers.{Batch, Export, Health, Search, Stats}
  alias Nexus.HTTP.{Request, Response}
  alias Nexus.Registry.TableRegistry

  @resources %{
    "users" => Nexus.Controllers.Users,
    "products" => Nexus.Controllers.Products,
    "orders" => Nexus.Controllers.Orders
  }

  @doc "Handles one request: {status, content_type, iodata}."
  def handle(%Request{} = req) do
    started = System.monotonic_time(:microsecond)

    response =
      try do
        dispatch(req)
      catch
        kind, reason ->
          Nexus.RequestLog.crash(req, kind, reason, __STACKTRACE__)
          Response.error(500, "internal error")
      end

    Nexus.RequestLog.log(req, elem(response, 0), System.monotonic_time(:microsecond) - started)
    response
  end

  @doc "Routes without logging (the batch controller logs each sub-request itself)."
  def dispatch(%Request{method: method, segments: segments} = req) do
    case {method, segments} do
      {"GET", ["health"]} -> Health.show(req)
      {"GET", ["api", "tables"]} -> Nexus.Controllers.Tables.index(req)
      {"GET", ["api", "search"]} -> Search.search(req)
      {"GET", ["api", "stats", table]} -> with_table(table, &Stats.show(req, &1))
      {"GET", ["api", "export", file]} -> export(req, file)
      {"POST", ["api", "batch"]} -> Batch.run(req)
      {"GET", ["api", table]} -> resource(table, &(&1.index(req, &2)))
      {"GET", ["api", table, id]} -> resource(table, &(&1.show(req, &2, id)))
      {"POST", ["api", table]} -> resource(table, &(&1.create(req, &2)))
      {m, ["api", table, id]} when m in ["PUT", "PATCH"] -> resource(table, &(&1.update(req, &2, id)))
      {"DELETE", ["api", table, id]} -> resource(table, &(&1.delete(req, &2, id)))
      {_, ["api" | _]} -> Response.error(405, "no route for #{method} #{req.path}")
      _ -> Response.not_found("route")
    end
  end

  defp export(req, file) do
    case String.split(file, ".") do
      [table, "csv"] -> with_table(table, &Export.csv(req, &1))
      _ -> Response.not_found("export format")
    end
  end

  defp resource(table, fun) do
    case Map.fetch(@resources, table) do
      {:ok, controller} -> with_table(table, &fun.(controller, &1))
      :error -> Response.not_found("table #{table}")
    end
  end

  @doc "Looks `table` up in the registry and calls `fun` with its TableInfo."
  def with_table(table, fun) do
    case TableRegistry.fetch(table) do
      {:ok, info} -> fun.(info)
      {:error, :unknown_table} -> Response.not_found("table #{table}")
      {:error, reason} -> Response.from_error(reason, "table")
    end
  end
end
