defmodule Nexus.Repo.Connection do
  @moduledoc """
  Owns the database connection: opens it with the configured adapter, runs
  the migrations, and publishes {adapter, conn} in `:persistent_term` so that
  `Nexus.Repo` can reach the database from the caller's process without a
  hop through this server. If the connection dies, this process dies with
  it (linked) and the supervisor restarts both.
  """
  use GenServer
  require Logger

  @key {Nexus.Repo, :connection}

  def start_link(config), do: GenServer.start_link(__MODULE__, config, name: __MODULE__)

  @doc "The adapter module and connection, or raises when the database is not open."
  def get do
    case :persistent_term.get(@key, nil) do
      nil -> raise "Nexus.Repo: the database is not open"
      pair -> pair
    end
  end

  @doc "The adapter module in use."
  def adapter, do: elem(get(), 0)

  @impl true
  def init(%Nexus.Config{} = config) do
    adapter = adapter_for(config.db)

    case adapter.connect(config) do
      {:ok, conn} ->
        :persistent_term.put(@key, {adapter, conn})
        :ok = Nexus.Repo.Migrations.run(adapter, conn, config.seed)
        {:ok, %{adapter: adapter, conn: conn}}

      {:error, reason} ->
        Logger.error("cannot open the #{config.db} database: #{inspect(reason)}")
        {:stop, reason}
    end
  end

  @impl true
  def terminate(_reason, _state) do
    :persistent_term.erase(@key)
    :ok
  end

  defp adapter_for(:sqlite), do: Nexus.Repo.SQLite
  defp adapter_for(:postgres), do: Nexus.Repo.Postgres
end
