defmodule Nexus.MixProject do
  use Mix.Project

  # Nexus has no dependencies beyond OTP and Debian's erlang-p1-sqlite3 and
  # erlang-p1-pgsql (on the default code path), so `mix compile` works offline.
  # scripts/nexus.sh builds it with elixirc instead, into build/, so that the
  # source tree stays clean. For scripts/deps.sh:
  # needs: elixir erlang-inets erlang-p1-sqlite3 erlang-p1-pgsql
  def project do
    [
      app: :nexus,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: false,
      deps: []
    ]
  end

  def application do
    [
      extra_applications: [:logger, :inets, :sqlite3],
      mod: {Nexus.Application, []}
    ]
  end
end
