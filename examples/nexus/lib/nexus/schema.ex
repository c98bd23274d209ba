defmodule Nexus.Schema do
  @moduledoc """
  The tables Nexus serves, as data. `Nexus.Repo.Migrations` creates them and
  records this metadata in the `nexus_tables` and `nexus_columns` tables,
  where `Nexus.Registry.TableRegistry` reads it back.

  Each column: {name, type, flags}; flags: :required, :searchable, :readonly.
  """

  @tables [
    %{
      name: "users",
      max_page: 100,
      columns: [
        {"id", :id, [:readonly]},
        {"name", :text, [:required, :searchable]},
        {"email", :text, [:required, :searchable]},
        {"country", :text, []},
        {"created_at", :int, [:readonly]}
      ]
    },
    %{
      name: "products",
      max_page: 100,
      columns: [
        {"id", :id, [:readonly]},
        {"sku", :text, [:required, :searchable]},
        {"name", :text, [:required, :searchable]},
        {"category", :text, [:searchable]},
        {"price", :float, [:required]},
        {"stock", :int, []},
        {"updated_at", :int, [:readonly]}
      ]
    },
    %{
      name: "orders",
      max_page: 100,
      columns: [
        {"id", :id, [:readonly]},
        {"user_id", :int, [:required]},
        {"product_id", :int, [:required]},
        {"quantity", :int, [:required]},
        {"total", :float, [:readonly]},
        {"status", :text, [:searchable]},
        {"created_at", :int, [:readonly]}
      ]
    }
  ]

  @doc "Every table served by the API."
  def tables, do: @tables

  @doc "The metadata tables themselves (not served)."
  def meta_tables do
    [
      %{
        name: "nexus_tables",
        columns: [
          {"name", :text, []},
          {"primary_key", :text, []},
          {"max_page", :int, []},
          {"version", :int, []}
        ]
      },
      %{
        name: "nexus_columns",
        columns: [
          {"table_name", :text, []},
          {"name", :text, []},
          {"type", :text, []},
          {"position", :int, []},
          {"required", :int, []},
          {"searchable", :int, []},
          {"readonly", :int, []}
        ]
      }
    ]
  end
end
