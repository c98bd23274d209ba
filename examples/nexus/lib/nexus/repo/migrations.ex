defmodule Nexus.Repo.Migrations do
  @moduledoc """
  Creates the schema of `Nexus.Schema` when it is missing, records its
  metadata, and seeds deterministic sample data into empty tables.
  """
  require Logger
  alias Nexus.Repo

  @doc "Runs on the freshly opened connection, before the registry starts."
  def run(adapter, conn, seed) do
    for table <- Nexus.Schema.meta_tables() ++ Nexus.Schema.tables() do
      :ok = adapter.execute_script(conn, create_sql(adapter, table))
    end

    :ok = adapter.execute_script(conn, "CREATE INDEX IF NOT EXISTS nexus_columns_table ON nexus_columns (table_name)")
    :ok = adapter.execute_script(conn, "CREATE INDEX IF NOT EXISTS orders_user ON orders (user_id)")
    record_metadata()
    seed_data(seed)
    :ok
  end

  defp create_sql(adapter, %{name: name, columns: columns}) do
    cols = Enum.map_join(columns, ", ", fn {col, type, _} -> "#{col} #{adapter.column_sql(type)}" end)
    "CREATE TABLE IF NOT EXISTS #{name} (#{cols})"
  end

  defp record_metadata do
    for %{name: name, columns: columns} = table <- Nexus.Schema.tables() do
      case Repo.get_by("nexus_tables", [name: name], primary_key: "name") do
        {:ok, _} ->
          :ok

        {:error, :not_found} ->
          {:ok, _} =
            Repo.insert("nexus_tables", %{
              "name" => name,
              "primary_key" => "id",
              "max_page" => table.max_page,
              "version" => 1
            }, returning: "name")

          columns
          |> Enum.with_index()
          |> Enum.each(fn {{col, type, flags}, position} ->
            {:ok, _} =
              Repo.insert("nexus_columns", %{
                "table_name" => name,
                "name" => col,
                "type" => Atom.to_string(type),
                "position" => position,
                "required" => flag(flags, :required),
                "searchable" => flag(flags, :searchable),
                "readonly" => flag(flags, :readonly)
              }, returning: "name")
          end)
      end
    end
  end

  defp flag(flags, f), do: if(f in flags, do: 1, else: 0)

  @countries ~w(IT FR DE ES PT NL BE AT CH SE NO DK FI PL CZ IE GB US CA BR)
  @categories ~w(books games garden kitchen music office outdoor sports tools toys)
  @words ~w(amber basalt cobalt dune ember fjord granite harbor indigo juniper kestrel lagoon meadow nimbus orchid pebble quartz river saffron tundra)

  defp seed_data(seed) do
    {:ok, users} = Repo.aggregate("users", :count, "*")

    if users == 0 do
      :rand.seed(:exsss, {7, 11, 13})
      now = System.os_time(:second)
      Logger.info("seeding #{seed} users, #{seed * 2} products, #{seed * 5} orders")

      for i <- 1..seed do
        w = Enum.random(@words)

        {:ok, _} =
          Repo.insert("users", %{
            "name" => "#{String.capitalize(w)} #{i}",
            "email" => "#{w}.#{i}@example.org",
            "country" => Enum.random(@countries),
            "created_at" => now - :rand.uniform(86_400 * 365)
          })
      end

      for i <- 1..(seed * 2) do
        {:ok, _} =
          Repo.insert("products", %{
            "sku" => "SKU-#{100_000 + i}",
            "name" => "#{String.capitalize(Enum.random(@words))} #{Enum.random(@words)} #{i}",
            "category" => Enum.random(@categories),
            "price" => :rand.uniform(50_000) / 100,
            "stock" => :rand.uniform(500),
            "updated_at" => now
          })
      end

      for _ <- 1..(seed * 5) do
        quantity = :rand.uniform(5)

        {:ok, _} =
          Repo.insert("orders", %{
            "user_id" => :rand.uniform(seed),
            "product_id" => :rand.uniform(seed * 2),
            "quantity" => quantity,
            "total" => quantity * :rand.uniform(50_000) / 100,
            "status" => Enum.random(~w(new paid shipped delivered)),
            "created_at" => now - :rand.uniform(86_400 * 30)
          })
      end
    end
  end
end
