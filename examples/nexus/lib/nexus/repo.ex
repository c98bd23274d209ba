defmodule Nexus.Repo do
  @moduledoc """
  The data layer, structured like an Ecto repo: every operation goes through
  the same pipeline before it reaches the database,

      prepare_opts(operation, opts)        merge the caller's options with
        default_options(operation)         the repo-wide defaults
      prepare_query(operation, query, opts) bound the query, render SQL

  and then through the adapter of `Nexus.Repo.Connection`. Like Ecto's
  callbacks, the three pipeline functions are public and called remotely,
  so a repo could override them.

  Rows come back as maps from column name to value. Each public operation
  has a 2- or 3-arity head without options and one with them, both calling a
  private `do_*` function, so that one operation is one call of a public
  read or write function (default arguments would make the shorter arity a
  second, nested call of the same operation).
  """
  require Logger
  alias Nexus.Repo.{Connection, Query}

  @default_timeout 5_000
  @max_rows 1_000

  # -- Reads ---------------------------------------------------------------

  @doc "The row of `table` whose primary key is `id`: {:ok, map} or {:error, :not_found}."
  def get(table, id), do: do_get(table, id, [])
  def get(table, id, opts), do: do_get(table, id, opts)

  defp do_get(table, id, opts) do
    opts = __MODULE__.prepare_opts(:get, opts)
    query = Query.select(table, where: [{opts[:primary_key], id}], limit: 1)
    single_row(:get, query, opts)
  end

  @doc "The first row of `table` matching every {column, value} of `clauses`."
  def get_by(table, clauses), do: do_get_by(table, clauses, [])
  def get_by(table, clauses, opts), do: do_get_by(table, clauses, opts)

  defp do_get_by(table, clauses, opts) do
    opts = __MODULE__.prepare_opts(:get_by, opts)
    query = Query.select(table, where: Enum.to_list(clauses), limit: 1)
    single_row(:get_by, query, opts)
  end

  @doc """
  Rows of `table`. Options: where ([{col, value}]), search ({cols, term}),
  order_by (col or {col, :asc | :desc}), limit, offset.
  """
  def all(table), do: do_all(table, [])
  def all(table, opts), do: do_all(table, opts)

  defp do_all(table, opts) do
    opts = __MODULE__.prepare_opts(:all, opts)

    query =
      Query.select(table,
        where: Keyword.get(opts, :where, []),
        search: opts[:search],
        order_by: opts[:order_by],
        limit: opts[:limit],
        offset: opts[:offset]
      )

    with {:ok, result} <- execute(:all, query, opts), do: {:ok, to_maps(result)}
  end

  @doc """
  count, sum, avg, min or max of `field` ("*" for count). With `group_by:
  col` the result is a list of {group, value}; else the value.
  """
  def aggregate(table, op, field), do: do_aggregate(table, op, field, [])
  def aggregate(table, op, field, opts), do: do_aggregate(table, op, field, opts)

  defp do_aggregate(table, op, field, opts) do
    opts = __MODULE__.prepare_opts(:aggregate, opts)
    query = Query.aggregate(table, op, field, where: Keyword.get(opts, :where, []), group_by: opts[:group_by])

    grouped? = opts[:group_by] != nil

    case execute(:aggregate, query, opts) do
      {:ok, %{rows: rows}} when grouped? -> {:ok, Enum.map(rows, fn [g, v] -> {g, v} end)}
      {:ok, %{rows: [[value]]}} -> {:ok, value || 0}
      {:ok, %{rows: []}} -> {:ok, 0}
      {:error, _} = error -> error
    end
  end

  # -- Writes --------------------------------------------------------------

  @doc "Inserts `fields` (map of column to value); {:ok, primary key}."
  def insert(table, fields), do: do_insert(table, fields, [])
  def insert(table, fields, opts), do: do_insert(table, fields, opts)

  defp do_insert(table, fields, opts) do
    opts = __MODULE__.prepare_opts(:insert, opts)
    query = Query.insert(table, Enum.sort(fields), opts[:returning] || opts[:primary_key])

    case execute(:insert, query, opts) do
      {:ok, %{rows: [[id | _] | _]}} -> {:ok, id}
      {:ok, _} -> {:error, :no_id}
      {:error, _} = error -> error
    end
  end

  @doc "Updates the row whose primary key is `id`; {:ok, 1} or {:error, :not_found}."
  def update(table, id, fields), do: do_update(table, id, fields, [])
  def update(table, id, fields, opts), do: do_update(table, id, fields, opts)

  defp do_update(table, id, fields, opts) do
    opts = __MODULE__.prepare_opts(:update, opts)
    pk = opts[:primary_key]
    query = Query.update(table, Enum.sort(fields), [{pk, id}], pk)
    affected(execute(:update, query, opts))
  end

  @doc "Deletes the row whose primary key is `id`; {:ok, 1} or {:error, :not_found}."
  def delete(table, id), do: do_delete(table, id, [])
  def delete(table, id, opts), do: do_delete(table, id, opts)

  defp do_delete(table, id, opts) do
    opts = __MODULE__.prepare_opts(:delete, opts)
    pk = opts[:primary_key]
    affected(execute(:delete, Query.delete(table, [{pk, id}], pk), opts))
  end

  # -- The pipeline ----------------------------------------------------------

  @doc "The caller's options over the defaults of the operation; validated."
  def prepare_opts(operation, opts) do
    opts = Keyword.merge(__MODULE__.default_options(operation), opts)

    case Keyword.fetch!(opts, :timeout) do
      t when is_integer(t) and t > 0 -> opts
      other -> raise ArgumentError, "Nexus.Repo: bad timeout #{inspect(other)}"
    end
  end

  @doc "Repo-wide defaults per operation."
  def default_options(operation) when operation in [:get, :get_by, :all, :aggregate],
    do: [timeout: @default_timeout, primary_key: "id", log: query_log(), max_rows: @max_rows]

  def default_options(_write),
    do: [timeout: @default_timeout, primary_key: "id", log: query_log(), max_rows: 1]

  # NEXUS_QUERY_LOG, set by Nexus.Logging.configure/1.
  defp query_log, do: :persistent_term.get({__MODULE__, :query_log}, :debug)

  @doc "Bounds the query by the options and renders it for the adapter: {sql, params}."
  def prepare_query(_operation, %Query{} = query, opts) do
    max_rows = Keyword.fetch!(opts, :max_rows)

    query =
      case query do
        %Query{kind: :select, limit: limit} when is_nil(limit) or limit > max_rows ->
          %Query{query | limit: max_rows}

        _ ->
          query
      end

    Query.to_sql(query, Keyword.fetch!(opts, :adapter).placeholder_style())
  end

  # -- Helpers --------------------------------------------------------------

  defp execute(operation, query, opts) do
    {adapter, conn} = Connection.get()
    {sql, params} = __MODULE__.prepare_query(operation, query, Keyword.put(opts, :adapter, adapter))
    started = System.monotonic_time(:microsecond)
    result = adapter.execute(conn, sql, params, opts[:timeout])
    log_query(opts[:log], query, sql, params, result, System.monotonic_time(:microsecond) - started)

    case result do
      {:error, reason} = error ->
        Logger.warning("repo #{operation} failed: #{inspect(reason)}")
        error

      ok ->
        ok
    end
  end

  # Like Ecto's query log: one line per query at the `log:` option's level
  # (NEXUS_QUERY_LOG, debug by default: at level info it costs the check only).
  defp log_query(level, query, sql, params, result, micros) do
    case level do
      :none ->
        :ok

      level ->
        outcome = if match?({:ok, _}, result), do: "OK", else: "ERROR"

        Logger.log(level, fn -> ["QUERY ", outcome, ?\s, sql, ?\s, inspect(params)] end,
          table: query.table,
          db_us: micros
        )
    end
  end

  defp single_row(operation, query, opts) do
    case execute(operation, query, opts) do
      {:ok, %{rows: []}} -> {:error, :not_found}
      {:ok, result} -> {:ok, hd(to_maps(result))}
      {:error, _} = error -> error
    end
  end

  defp affected({:ok, %{rows: []}}), do: {:error, :not_found}
  defp affected({:ok, %{rows: rows}}), do: {:ok, length(rows)}
  defp affected({:error, _} = error), do: error

  defp to_maps(%{columns: columns, rows: rows}) do
    Enum.map(rows, fn row -> columns |> Enum.zip(row) |> Map.new() end)
  end
end
