defmodule Nexus.Repo.Postgres do
  @moduledoc """
  PostgreSQL through Debian's erlang-p1-pgsql (`:pgsql`), chosen with
  NEXUS_DB=postgres.

  What this driver needs, learnt the hard way:
    * `:stringprep` must be started first (SCRAM authentication);
    * `pquery/3` never returns when the statement fails, so every statement
      goes through named prepared statements (`prepare/3` + `execute/3`),
      which do report errors; names must be strings;
    * parameters are encoded by the type the server inferred: integers as
      integers, float8 as an 8-byte big-endian binary, text as binaries;
    * results come back as strings (integers, numeric), 8-byte binaries
      (float8) or binaries (text), tagged with their type.

  Prepared statement names are cached per SQL text in a public ETS table
  owned by the connection's owner process.
  """
  @behaviour Nexus.Repo.Adapter

  import Bitwise, only: [<<<: 2]

  @statements :nexus_pg_statements

  @impl true
  def connect(%Nexus.Config{pg: pg}) do
    {:ok, _} = Application.ensure_all_started(:stringprep)

    opts = [
      host: String.to_charlist(pg[:host]),
      port: pg[:port],
      database: String.to_charlist(pg[:database]),
      user: String.to_charlist(pg[:user]),
      password: String.to_charlist(pg[:password])
    ]

    case :pgsql.connect(opts) do
      {:ok, conn} ->
        if :ets.whereis(@statements) == :undefined,
          do: :ets.new(@statements, [:named_table, :public, :set, read_concurrency: true])

        {:ok, conn}

      {:error, reason} ->
        {:error, {:postgres, reason}}
    end
  end

  @impl true
  def placeholder_style, do: :dollar

  @impl true
  def column_sql(:id), do: "BIGSERIAL PRIMARY KEY"
  def column_sql(:int), do: "BIGINT"
  def column_sql(:float), do: "DOUBLE PRECISION"
  def column_sql(:text), do: "TEXT"

  @impl true
  def execute(conn, sql, params, _timeout) do
    with {:ok, name, types, columns} <- statement(conn, sql),
         {:ok, encoded} <- encode_params(params, types) do
      case :pgsql.execute(conn, name, encoded) do
        {:ok, {_tag, rows}} when is_list(rows) -> {:ok, decode(columns, rows)}
        {:ok, {_command, _count}} -> {:ok, %{columns: [], rows: []}}
        {:ok, _other} -> {:ok, %{columns: [], rows: []}}
        {:error, fields} -> {:error, {:postgres, error_message(fields)}}
      end
    end
  end

  @impl true
  def execute_script(conn, sql) do
    case :pgsql.squery(conn, sql, 30_000) do
      {:ok, _} -> :ok
      {:error, fields} -> {:error, {:postgres, error_message(fields)}}
    end
  end

  defp statement(conn, sql) do
    case :ets.lookup(@statements, sql) do
      [{^sql, name, types, columns}] ->
        {:ok, name, types, columns}

      [] ->
        name = "nx" <> Integer.to_string(:erlang.phash2(sql, 1 <<< 27))

        case :pgsql.prepare(conn, name, sql) do
          {:ok, _status, types, columns} ->
            columns = Enum.map(columns, fn {col, _type} -> to_string(col) end)
            :ets.insert(@statements, {sql, name, types, columns})
            {:ok, name, types, columns}

          {:error, fields} ->
            message = error_message(fields)

            # Another process prepared the same SQL first: wait for its entry.
            if String.contains?(message, "already exists"),
              do: await_statement(sql, 100),
              else: {:error, {:postgres, message}}
        end
    end
  end

  defp await_statement(_sql, 0), do: {:error, {:postgres, "prepared statement not published"}}

  defp await_statement(sql, tries) do
    case :ets.lookup(@statements, sql) do
      [{^sql, name, types, columns}] ->
        {:ok, name, types, columns}

      [] ->
        Process.sleep(1)
        await_statement(sql, tries - 1)
    end
  end

  defp encode_params(params, types) when length(params) == length(types),
    do: {:ok, Enum.zip_with(params, types, &encode/2)}

  defp encode_params(_, _), do: {:error, {:postgres, "parameter count mismatch"}}

  defp encode(nil, _), do: :null
  defp encode(v, type) when type in [:float8, :float4] and is_number(v), do: <<v * 1.0::float-64>>
  defp encode(v, type) when type in [:int2, :int4, :int8] and is_float(v), do: trunc(v)
  defp encode(true, _), do: 1
  defp encode(false, _), do: 0
  defp encode(v, :text) when is_number(v), do: to_string(v)
  defp encode(v, _), do: v

  defp decode(columns, rows) do
    %{columns: columns, rows: Enum.map(rows, fn row -> Enum.map(row, &decode_value/1) end)}
  end

  defp decode_value({_type, :null}), do: nil
  defp decode_value({type, v}) when type in [:int2, :int4, :int8], do: String.to_integer(to_string(v))
  defp decode_value({:float8, <<f::float-64>>}), do: f
  defp decode_value({:float4, <<f::float-32>>}), do: f

  defp decode_value({:numeric, v}) do
    case Float.parse(to_string(v)) do
      {f, _} -> f
      :error -> to_string(v)
    end
  end

  defp decode_value({_type, v}) when is_list(v), do: List.to_string(v)
  defp decode_value({_type, v}), do: v

  defp error_message(fields) when is_list(fields) do
    case List.keyfind(fields, :message, 0) do
      {:message, m} -> to_string(m)
      nil -> inspect(fields)
    end
  end

  defp error_message(other), do: inspect(other)
end
