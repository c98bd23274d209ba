defmodule Nexus.Controllers.Products do
  @moduledoc "products: prices and stock are never negative; updated_at follows writes."
  use Nexus.Controllers.Resource

  @impl true
  def prepare(fields, _info, _action) do
    cond do
      is_number(fields["price"]) and fields["price"] < 0 -> {:error, {:invalid, "price must be >= 0"}}
      is_integer(fields["stock"]) and fields["stock"] < 0 -> {:error, {:invalid, "stock must be >= 0"}}
      true -> {:ok, Map.put(fields, "updated_at", System.os_time(:second))}
    end
  end
end
