defmodule Nexus.Controllers.Tables do
  @moduledoc "GET /api/tables: every table with its columns."
  alias Nexus.HTTP.Response
  alias Nexus.Registry.TableRegistry

  def index(_req) do
    tables =
      for name <- TableRegistry.list(), {:ok, info} <- [TableRegistry.fetch(name)] do
        %{
          "name" => name,
          "primary_key" => info.primary_key,
          "columns" => Enum.map(info.columns, &Map.new(&1, fn {k, v} -> {Atom.to_string(k), v} end))
        }
      end

    Response.json(200, %{"data" => tables})
  end
end
