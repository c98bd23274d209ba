defmodule Nexus.Repo.Adapter do
  @moduledoc """
  What a database adapter provides to `Nexus.Repo`. Results are normalised:
  `%{columns: [String.t()], rows: [[term]]}` with `nil` for NULL.
  """

  @type conn :: term
  @type result :: %{columns: [String.t()], rows: [[term]]}

  @callback connect(Nexus.Config.t()) :: {:ok, conn} | {:error, term}
  @callback placeholder_style() :: :question | :dollar
  @callback execute(conn, sql :: String.t(), params :: [term], timeout) ::
              {:ok, result} | {:error, term}
  @callback execute_script(conn, sql :: String.t()) :: :ok | {:error, term}
  @callback column_sql(:id | :int | :float | :text) :: String.t()
end
