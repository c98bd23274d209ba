defmodule Nexus do
  @moduledoc """
  Nexus: a small API gateway over a SQL database, the target of Giulia's demo.

  Start it with `Nexus.start/0` from `elixir -e` (see scripts/nexus.sh); it
  reads its settings from the environment (`Nexus.Config`), loads its own
  application spec when it was built with elixirc (no .app file), and starts
  the application: the database connection, the table registry and the HTTP
  server on 127.0.0.1.
  """

  @app_spec [
    description: ~c"Nexus API gateway (Giulia demo target)",
    vsn: ~c"0.1.0",
    modules: [],
    registered: [],
    applications: [:kernel, :stdlib, :elixir, :logger, :inets, :sqlite3],
    mod: {Nexus.Application, []}
  ]

  @doc "Starts the application; returns :ok or raises with the reason."
  def start do
    case :application.load({:application, :nexus, @app_spec}) do
      :ok -> :ok
      {:error, {:already_loaded, :nexus}} -> :ok
    end

    case Application.ensure_all_started(:nexus) do
      {:ok, _apps} -> :ok
      {:error, reason} -> raise "nexus did not start: #{inspect(reason)}"
    end
  end

  @doc "Stops the application (the node keeps running)."
  def stop, do: Application.stop(:nexus)
end
