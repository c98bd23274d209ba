defmodule Nexus.Registry.TableInfo do
  @moduledoc "What the API knows about one table: its columns and their roles."

  defstruct name: nil, primary_key: "id", max_page: 100, version: 1, columns: []

  @type column :: %{
          name: String.t(),
          type: String.t(),
          required: boolean,
          searchable: boolean,
          readonly: boolean
        }
  @type t :: %__MODULE__{}

  @doc "Builds the struct from the rows of nexus_tables and nexus_columns."
  def from_rows(table_row, column_rows) do
    %__MODULE__{
      name: table_row["name"],
      primary_key: table_row["primary_key"],
      max_page: table_row["max_page"],
      version: table_row["version"],
      columns:
        Enum.map(column_rows, fn c ->
          %{
            name: c["name"],
            type: c["type"],
            required: c["required"] == 1,
            searchable: c["searchable"] == 1,
            readonly: c["readonly"] == 1
          }
        end)
    }
  end

  def column_names(%__MODULE__{columns: cols}), do: Enum.map(cols, & &1.name)
  def searchable(%__MODULE__{columns: cols}), do: for(c <- cols, c.searchable, do: c.name)
  def writable(%__MODULE__{columns: cols}), do: for(c <- cols, not c.readonly, do: c)
  def required(%__MODULE__{columns: cols}), do: for(c <- cols, c.required, do: c.name)
  def column(%__MODULE__{columns: cols}, name), do: Enum.find(cols, &(&1.name == name))
  def numeric?(%__MODULE__{} = t, name), do: match?(%{type: type} when type in ["int", "float", "id"], column(t, name))
end
