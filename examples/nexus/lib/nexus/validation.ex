defmodule Nexus.Validation do
  @moduledoc """
  Casts a decoded JSON body against a table's columns: only writable
  columns, values of the column's type, required columns present on create.
  """
  alias Nexus.Registry.TableInfo

  @max_text 1_000

  @doc "{:ok, fields} (map of column to value) or {:error, {:invalid, message}}."
  def cast(body, %TableInfo{} = info, action) when is_map(body) do
    writable = Map.new(TableInfo.writable(info), &{&1.name, &1})

    with :ok <- unknown_keys(body, writable, info),
         {:ok, fields} <- cast_values(body, writable),
         :ok <- required(fields, info, action) do
      {:ok, fields}
    end
  end

  def cast(_body, _info, _action), do: invalid("the body must be a JSON object")

  defp unknown_keys(body, writable, info) do
    case Enum.reject(Map.keys(body), &Map.has_key?(writable, &1)) do
      [] -> :ok
      keys -> invalid("not writable in #{info.name}: #{Enum.join(Enum.sort(keys), ", ")}")
    end
  end

  defp cast_values(body, writable) do
    Enum.reduce_while(body, {:ok, %{}}, fn {key, value}, {:ok, acc} ->
      case cast_value(writable[key].type, value) do
        {:ok, v} -> {:cont, {:ok, Map.put(acc, key, v)}}
        :error -> {:halt, invalid("#{key} must be of type #{writable[key].type}")}
      end
    end)
  end

  defp cast_value(_type, nil), do: {:ok, nil}
  defp cast_value("int", v) when is_integer(v), do: {:ok, v}
  defp cast_value("float", v) when is_number(v), do: {:ok, v * 1.0}
  defp cast_value("text", v) when is_binary(v) and byte_size(v) <= @max_text, do: {:ok, v}
  defp cast_value(_type, _v), do: :error

  defp required(_fields, _info, :update), do: :ok

  defp required(fields, info, :create) do
    case Enum.reject(TableInfo.required(info), &(Map.get(fields, &1) != nil)) do
      [] -> :ok
      missing -> invalid("required: #{Enum.join(missing, ", ")}")
    end
  end

  defp invalid(message), do: {:error, {:invalid, message}}
end
