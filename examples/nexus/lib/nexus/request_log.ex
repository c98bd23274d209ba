defmodule Nexus.RequestLog do
  @moduledoc """
  One info line per request through Elixir's Logger (see `Nexus.Logging`
  for the level and the synchronous/asynchronous switch).
  """
  require Logger

  @doc "Logs a finished request."
  def log(%Nexus.HTTP.Request{} = req, status, micros) do
    Logger.info(
      [req.method, ?\s, req.path, " -> ", Integer.to_string(status)],
      request_id: req.id,
      method: req.method,
      path: req.path,
      status: status,
      duration_us: micros
    )
  end

  @doc "Logs a request that crashed, with the reason."
  def crash(%Nexus.HTTP.Request{} = req, kind, reason, stack) do
    Logger.error("#{req.method} #{req.path} crashed: " <> Exception.format(kind, reason, stack))
  end
end
