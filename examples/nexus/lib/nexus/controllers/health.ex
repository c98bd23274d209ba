defmodule Nexus.Controllers.Health do
  @moduledoc "GET /health: the node, the database adapter, and the row counts."
  alias Nexus.HTTP.Response

  def show(_req) do
    Response.json(200, %{
      "status" => "ok",
      "node" => Atom.to_string(node()),
      "database" => inspect(Nexus.Repo.Connection.adapter())
    })
  end
end
