defmodule Nexus.Registry.TableRegistry do
  @moduledoc """
  The schema registry every request consults: which tables exist, their
  primary keys, columns, which are searchable, required or read-only.

  The metadata lives in the database (`nexus_tables`, `nexus_columns`) so
  that an operator can change it without a deploy. In the default mode
  (`:db`, NEXUS_REGISTRY=db) this server reads it back through `Nexus.Repo`
  on every call: two queries per lookup, in one process that every request
  waits on, for data that changes a few times a year. This is the design
  flaw Giulia's profile is expected to find.

  The fix is the `:ets` mode (NEXUS_REGISTRY=ets, or `set_mode(:ets)` on a
  running node): the server loads every table's metadata into a protected
  ETS table with `read_concurrency` and refreshes an entry when it changes
  (`touch/1`); lookups read ETS in the caller's process, with no message
  and no query.
  """
  use GenServer
  require Logger
  alias Nexus.Registry.TableInfo
  alias Nexus.Repo

  @call_timeout 10_000
  @cache :nexus_table_registry
  @mode_key {__MODULE__, :mode}

  def start_link(config), do: GenServer.start_link(__MODULE__, config, name: __MODULE__)

  @doc "The metadata of `table`: {:ok, %TableInfo{}} or {:error, :unknown_table}."
  def fetch(table) when is_binary(table) do
    case :persistent_term.get(@mode_key, :db) do
      :db -> GenServer.call(__MODULE__, {:fetch, table}, @call_timeout)
      :ets -> cached(table)
    end
  end

  @doc "The columns of `table` (empty for an unknown table)."
  def columns(table) do
    case fetch(table) do
      {:ok, info} -> info.columns
      {:error, _} -> []
    end
  end

  @doc "Whether `table` is served by the API."
  def exists?(table), do: match?({:ok, _}, fetch(table))

  @doc "The names of every table served by the API."
  def list do
    case :persistent_term.get(@mode_key, :db) do
      :db -> GenServer.call(__MODULE__, :list, @call_timeout)
      :ets -> @cache |> :ets.select([{{:"$1", :_}, [], [:"$1"]}]) |> Enum.sort()
    end
  end

  @doc "Bumps a table's metadata version (after an operator edited its columns)."
  def touch(table), do: GenServer.call(__MODULE__, {:touch, table}, @call_timeout)

  @doc "Switches between reading the database on every call (:db) and the ETS cache (:ets)."
  def set_mode(mode) when mode in [:db, :ets], do: GenServer.call(__MODULE__, {:set_mode, mode}, @call_timeout)

  @doc "The current mode."
  def mode, do: :persistent_term.get(@mode_key, :db)

  @impl true
  def init(%Nexus.Config{registry: mode}) do
    :ets.new(@cache, [:named_table, :protected, :set, read_concurrency: true])
    {:ok, tables} = Repo.all("nexus_tables", order_by: "name")
    Logger.info("table registry: #{length(tables)} tables, mode #{mode}")
    {:ok, switch(mode, %{lookups: 0})}
  end

  @impl true
  def handle_call({:fetch, table}, _from, state) do
    {:reply, load(table), %{state | lookups: state.lookups + 1}}
  end

  def handle_call(:list, _from, state) do
    {:reply, table_names(), %{state | lookups: state.lookups + 1}}
  end

  def handle_call({:touch, table}, _from, state) do
    reply =
      with {:ok, row} <- Repo.get_by("nexus_tables", [name: table], primary_key: "name") do
        Repo.update("nexus_tables", table, %{"version" => row["version"] + 1}, primary_key: "name")
      end

    refresh(table)
    {:reply, reply, state}
  end

  def handle_call({:set_mode, mode}, _from, state) do
    {:reply, :ok, switch(mode, state)}
  end

  @impl true
  def terminate(_reason, _state) do
    :persistent_term.erase(@mode_key)
    :ok
  end

  defp switch(:ets, state) do
    Enum.each(table_names(), &refresh/1)
    :persistent_term.put(@mode_key, :ets)
    state
  end

  defp switch(:db, state) do
    :persistent_term.put(@mode_key, :db)
    :ets.delete_all_objects(@cache)
    state
  end

  defp cached(table) do
    case :ets.lookup(@cache, table) do
      [{^table, info}] -> {:ok, info}
      [] -> {:error, :unknown_table}
    end
  end

  defp refresh(table) do
    case load(table) do
      {:ok, info} -> :ets.insert(@cache, {table, info})
      {:error, _} -> :ets.delete(@cache, table)
    end
  end

  defp table_names do
    case Repo.all("nexus_tables", order_by: "name") do
      {:ok, rows} -> Enum.map(rows, & &1["name"])
      {:error, _} -> []
    end
  end

  defp load(table) do
    with {:ok, row} <- Repo.get_by("nexus_tables", [name: table], primary_key: "name"),
         {:ok, cols} <- Repo.all("nexus_columns", where: [{"table_name", table}], order_by: "position") do
      {:ok, TableInfo.from_rows(row, cols)}
    else
      {:error, :not_found} -> {:error, :unknown_table}
      {:error, _} = error -> error
    end
  end
end
