defmodule Nexus.Config do
  @moduledoc """
  Settings from the environment, read once at start.

    NEXUS_PORT          HTTP port on 127.0.0.1 (4040)
    NEXUS_DB            sqlite (default) or postgres
    NEXUS_DB_PATH       SQLite file (default: nexus.db in the working directory)
    NEXUS_PG_HOST       PostgreSQL host or socket directory (127.0.0.1)
    NEXUS_PG_PORT       PostgreSQL port (5432)
    NEXUS_PG_DATABASE   database name (nexus)
    NEXUS_PG_USER       user ($USER)
    NEXUS_PG_PASSWORD   password (empty)
    NEXUS_SEED          number of users to seed (200; products and orders scale with it)
    NEXUS_LOG_LEVEL     debug, info (default), warning, error or none
    NEXUS_LOG_MODE      default, sync or async (see Nexus.Logging)
    NEXUS_QUERY_LOG     level of the per-query log of Nexus.Repo: debug (default,
                        so silent at level info), info, or none
    NEXUS_REGISTRY      db (default: the table registry reads the database on every
                        call) or ets (the fix: metadata cached in ETS, refreshed on change)
  """

  defstruct port: 4040,
            db: :sqlite,
            db_path: "nexus.db",
            pg: [],
            seed: 200,
            log_level: :info,
            log_mode: :default,
            query_log: :debug,
            registry: :db

  @type t :: %__MODULE__{}

  @doc "Reads the settings; raises on a value it cannot use."
  def load do
    %__MODULE__{
      port: int_env("NEXUS_PORT", 4040, 1, 65535),
      db: db_env(System.get_env("NEXUS_DB", "sqlite")),
      db_path: System.get_env("NEXUS_DB_PATH", "nexus.db"),
      pg: pg_env(),
      seed: int_env("NEXUS_SEED", 200, 1, 1_000_000),
      log_level: level_env(System.get_env("NEXUS_LOG_LEVEL", "info")),
      log_mode: mode_env(System.get_env("NEXUS_LOG_MODE", "default")),
      query_log: query_log_env(System.get_env("NEXUS_QUERY_LOG", "debug")),
      registry: registry_env(System.get_env("NEXUS_REGISTRY", "db"))
    }
  end

  defp int_env(name, default, min, max) do
    case System.get_env(name) do
      nil ->
        default

      text ->
        case Integer.parse(text) do
          {n, ""} when n >= min and n <= max -> n
          _ -> raise ArgumentError, "#{name} must be an integer in #{min}..#{max}, not #{inspect(text)}"
        end
    end
  end

  defp db_env("sqlite"), do: :sqlite
  defp db_env("postgres"), do: :postgres
  defp db_env(other), do: raise(ArgumentError, "NEXUS_DB must be sqlite or postgres, not #{inspect(other)}")

  defp level_env(level) when level in ["debug", "info", "warning", "error", "none"],
    do: String.to_atom(level)

  defp level_env(other),
    do: raise(ArgumentError, "NEXUS_LOG_LEVEL must be debug, info, warning, error or none, not #{inspect(other)}")

  defp mode_env(mode) when mode in ["default", "sync", "async"], do: String.to_atom(mode)

  defp mode_env(other),
    do: raise(ArgumentError, "NEXUS_LOG_MODE must be default, sync or async, not #{inspect(other)}")

  defp query_log_env(level) when level in ["debug", "info", "none"], do: String.to_atom(level)

  defp query_log_env(other),
    do: raise(ArgumentError, "NEXUS_QUERY_LOG must be debug, info or none, not #{inspect(other)}")

  defp registry_env("db"), do: :db
  defp registry_env("ets"), do: :ets
  defp registry_env(other), do: raise(ArgumentError, "NEXUS_REGISTRY must be db or ets, not #{inspect(other)}")

  defp pg_env do
    [
      host: System.get_env("NEXUS_PG_HOST", "127.0.0.1"),
      port: int_env("NEXUS_PG_PORT", 5432, 1, 65535),
      database: System.get_env("NEXUS_PG_DATABASE", "nexus"),
      user: System.get_env("NEXUS_PG_USER", System.get_env("USER", "postgres")),
      password: System.get_env("NEXUS_PG_PASSWORD", "")
    ]
  end
end
