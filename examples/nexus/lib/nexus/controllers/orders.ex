defmodule Nexus.Controllers.Orders do
  @moduledoc """
  orders: the user and the product must exist, the quantity is 1..100, the
  total is computed from the product's price, and the stock goes down.
  """
  use Nexus.Controllers.Resource
  alias Nexus.Repo

  @impl true
  def prepare(fields, _info, :create) do
    with {:ok, quantity} <- quantity(fields["quantity"]),
         {:ok, _user} <- exists("users", fields["user_id"]),
         {:ok, product} <- exists("products", fields["product_id"]),
         :ok <- take_stock(product, quantity) do
      {:ok,
       fields
       |> Map.put("total", Float.round(product["price"] * quantity, 2))
       |> Map.put_new("status", "new")
       |> Map.put("created_at", System.os_time(:second))}
    end
  end

  def prepare(fields, _info, :update) do
    case Map.take(fields, ["user_id", "product_id", "quantity"]) do
      empty when map_size(empty) == 0 -> {:ok, fields}
      _ -> {:error, {:invalid, "only the status of an order can change"}}
    end
  end

  defp quantity(q) when is_integer(q) and q in 1..100, do: {:ok, q}
  defp quantity(_), do: {:error, {:invalid, "quantity must be an integer in 1..100"}}

  defp exists(table, id) do
    case Repo.get(table, id) do
      {:ok, row} -> {:ok, row}
      {:error, :not_found} -> {:error, {:invalid, "no #{table} row with id #{inspect(id)}"}}
      {:error, _} = error -> error
    end
  end

  # Stock never blocks an order in this demo: it is replenished when it runs out.
  defp take_stock(product, quantity) do
    stock = product["stock"] || 0
    left = if stock >= quantity, do: stock - quantity, else: stock + 500 - quantity

    case Repo.update("products", product["id"], %{"stock" => left}) do
      {:ok, _} -> :ok
      {:error, _} = error -> error
    end
  end
end
