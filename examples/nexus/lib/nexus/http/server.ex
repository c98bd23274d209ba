defmodule Nexus.HTTP.Server do
  @moduledoc """
  Runs `:inets` httpd on 127.0.0.1 with `Nexus.HTTP.Handler` as its only
  module. Start the node with
  `--erl "-kernel inet_default_listen_options [{nodelay,true}]"`: without
  TCP_NODELAY each keep-alive response waits ~40 ms for delayed ACKs.
  """
  use GenServer
  require Logger

  def start_link(config), do: GenServer.start_link(__MODULE__, config, name: __MODULE__)

  @impl true
  def init(%Nexus.Config{port: port}) do
    Process.flag(:trap_exit, true)
    root = String.to_charlist(System.tmp_dir!())

    options = [
      port: port,
      bind_address: {127, 0, 0, 1},
      ipfamily: :inet,
      server_name: ~c"nexus",
      server_root: root,
      document_root: root,
      modules: [Nexus.HTTP.Handler],
      max_clients: 1_000,
      keep_alive: true,
      max_keep_alive_request: 1_000_000,
      keep_alive_timeout: 60,
      max_body_size: 2_000_000
    ]

    case :inets.start(:httpd, options) do
      {:ok, pid} ->
        {:ok, %{httpd: pid, port: port}}

      {:error, reason} ->
        Logger.error("cannot listen on 127.0.0.1:#{port}: #{inspect(reason)}")
        {:stop, reason}
    end
  end

  @impl true
  def terminate(_reason, %{httpd: pid}) do
    :inets.stop(:httpd, pid)
  end
end
