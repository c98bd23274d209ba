defmodule Nexus.Registry.TableRegistry do
  @moduledoc """
  The schema registry every request consults: which tables exist, their
  primary keys, columns, which are searchable, required or read-only.

  The metadata lives in the database (`nexus_tables`, `nexus_columns`) so
  that an operator can change it without a deploy, and this server reads it
  back through `Nexus.Repo` on every call: two queries per lookup, in one
  process that every request waits on. The data changes a few times a year.
  (This is the design flaw Giulia's profile is expected to find.)
  """
  use GenServer
  require Logger
  alias Nexus.Registry.TableInfo
  alias Nexus.Repo

  @call_timeout 10_000

  def start_link(config), do: GenServer.start_link(__MODULE__, config, name: __MODULE__)

  @doc "The metadata of `table`: {:ok, %TableInfo{}} or {:error, :unknown_table}."
  def fetch(table) when is_binary(table), do: GenServer.call(__MODULE__, {:fetch, table}, @call_timeout)

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
  def list, do: GenServer.call(__MODULE__, :list, @call_timeout)

  @doc "Bumps a table's metadata version (after an operator edited its columns)."
  def touch(table), do: GenServer.call(__MODULE__, {:touch, table}, @call_timeout)

  @impl true
  def init(_config) do
    {:ok, tables} = Repo.all("nexus_tables", order_by: "name")
    Logger.info("table registry: #{length(tables)} tables")
    {:ok, %{lookups: 0}}
  end

  @impl true
  def handle_call({:fetch, table}, _from, state) do
    {:reply, load(table), %{state | lookups: state.lookups + 1}}
  end

  def handle_call(:list, _from, state) do
    reply =
      case Repo.all("nexus_tables", order_by: "name") do
        {:ok, rows} -> Enum.map(rows, & &1["name"])
        {:error, _} -> []
      end

    {:reply, reply, %{state | lookups: state.lookups + 1}}
  end

  def handle_call({:touch, table}, _from, state) do
    reply =
      with {:ok, row} <- Repo.get_by("nexus_tables", [name: table], primary_key: "name") do
        Repo.update("nexus_tables", table, %{"version" => row["version"] + 1}, primary_key: "name")
      end

    {:reply, reply, state}
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
