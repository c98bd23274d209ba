defmodule Nexus.View do
  @moduledoc """
  Renders rows for the API: the table's columns in schema order, looked up
  in the registry so that a column hidden by an operator disappears at once.
  """
  alias Nexus.Registry.{TableInfo, TableRegistry}

  @doc "One row as an ordered map of its table's columns."
  def render(table, row), do: hd(render_many(table, [row]))

  @doc "Rows as maps restricted to the table's columns."
  def render_many(table, rows) do
    columns =
      case TableRegistry.fetch(table) do
        {:ok, info} -> TableInfo.column_names(info)
        {:error, _} -> rows |> List.first(%{}) |> Map.keys()
      end

    Enum.map(rows, &Map.take(&1, columns))
  end
end
