defmodule Nexus.Repo.SQLite do
  @moduledoc """
  SQLite through Debian's erlang-p1-sqlite3 (`:sqlite3`). One connection is
  one gen_server owned by `Nexus.Repo.Connection`; callers run statements
  on it directly, so it serialises them (WAL journal, NORMAL sync).
  """
  @behaviour Nexus.Repo.Adapter

  @impl true
  def connect(%Nexus.Config{db_path: path}) do
    with {:ok, db} <- :sqlite3.open(:anonymous, file: String.to_charlist(path)),
         :ok <- pragma(db, "PRAGMA journal_mode=WAL"),
         :ok <- pragma(db, "PRAGMA synchronous=NORMAL"),
         :ok <- pragma(db, "PRAGMA busy_timeout=5000") do
      {:ok, db}
    end
  end

  @impl true
  def placeholder_style, do: :question

  @impl true
  def column_sql(:id), do: "INTEGER PRIMARY KEY AUTOINCREMENT"
  def column_sql(:int), do: "INTEGER"
  def column_sql(:float), do: "REAL"
  def column_sql(:text), do: "TEXT"

  @impl true
  def execute(db, sql, params, timeout) do
    case :sqlite3.sql_exec_timeout(db, sql, Enum.map(params, &to_param/1), timeout) do
      [columns: columns, rows: rows] ->
        {:ok, %{columns: Enum.map(columns, &List.to_string/1), rows: Enum.map(rows, &from_row/1)}}

      :ok ->
        {:ok, %{columns: [], rows: []}}

      {:rowid, id} ->
        {:ok, %{columns: ["id"], rows: [[id]]}}

      {:error, code, message} ->
        {:error, {:sqlite, code, to_string(message)}}

      {:error, reason} ->
        {:error, reason}
    end
  end

  @impl true
  def execute_script(db, sql) do
    case :sqlite3.sql_exec_script(db, sql) do
      {:error, code, message} -> {:error, {:sqlite, code, to_string(message)}}
      {:error, reason} -> {:error, reason}
      _ -> :ok
    end
  end

  defp pragma(db, sql) do
    case :sqlite3.sql_exec(db, sql) do
      {:error, code, message} -> {:error, {:sqlite, code, to_string(message)}}
      _ -> :ok
    end
  end

  defp to_param(nil), do: :null
  defp to_param(true), do: 1
  defp to_param(false), do: 0
  defp to_param(value), do: value

  defp from_row(row), do: row |> Tuple.to_list() |> Enum.map(&from_value/1)

  defp from_value(:null), do: nil
  defp from_value(value), do: value
end
