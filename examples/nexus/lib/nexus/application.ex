defmodule Nexus.Application do
  @moduledoc """
  The supervision tree: the database connection first (it creates and seeds
  the schema), then the table registry that reads it, then the HTTP server.
  """
  use Application
  require Logger

  @impl true
  def start(_type, _args) do
    config = Nexus.Config.load()
    Nexus.Logging.configure(config)

    children = [
      {Nexus.Repo.Connection, config},
      {Nexus.Registry.TableRegistry, config},
      {Nexus.HTTP.Server, config}
    ]

    result = Supervisor.start_link(children, strategy: :rest_for_one, name: Nexus.Supervisor)
    Logger.info("nexus started on http://127.0.0.1:#{config.port} (#{config.db})")
    result
  end
end
