defmodule Nexus.Logging do
  @moduledoc """
  The switch for request logging (NEXUS_LOG_LEVEL, NEXUS_LOG_MODE).

  Elixir 1.14's Logger is a `gen_event` process registered as `Logger` with
  the console backend. A caller of `Logger.info/1` formats the message
  metadata and sends it to that process; what happens next depends on the
  length of its mailbox:

    * below `sync_threshold` (default 20) the call is asynchronous;
    * at or above it the caller waits until the event is handled (sync mode);
    * at or above `discard_threshold` (default 500) messages are dropped.

  The modes:

    * `default` leaves Elixir's thresholds (20 / 500);
    * `sync` sets `sync_threshold: 0`: every log call waits for the console
      backend to format and write the line, so logging cost sits on the
      request path and the Logger process serialises all requests;
    * `async` sets `sync_threshold: 5_000` and `discard_threshold: 20_000`,
      and gives the console backend a larger buffer (`max_buffer: 2_000`), so
      that callers do not wait (the OTP `logger_std_h` equivalents are
      `sync_mode_qlen`, `drop_mode_qlen` and `flush_qlen`).

  Raising the level (`warning`) removes the formatting and the write, but
  each `Logger.info` call site still runs its level check; `none` turns
  logging off.
  """

  @async [sync_threshold: 5_000, discard_threshold: 20_000]
  @sync [sync_threshold: 0]
  @format "$time $metadata[$level] $message\n"
  @metadata [:request_id, :method, :path, :status, :duration_us, :table, :db_us]

  @doc """
  Applies the configured level and mode to Elixir's Logger, the console
  format (time, the request's metadata, level, message) and the level of
  `Nexus.Repo`'s per-query log (NEXUS_QUERY_LOG; `:persistent_term`).
  """
  def configure(%Nexus.Config{log_level: level, log_mode: mode, query_log: query_log}) do
    Logger.configure(level: level)
    Logger.configure_backend(:console, format: @format, metadata: @metadata)
    apply_mode(mode)
    :persistent_term.put({Nexus.Repo, :query_log}, query_log)
    :ok
  end

  @doc "Switches the mode at run time (:default, :sync or :async)."
  def apply_mode(:default), do: Logger.configure(sync_threshold: 20, discard_threshold: 500)
  def apply_mode(:sync), do: Logger.configure(@sync)

  def apply_mode(:async) do
    Logger.configure(@async)
    Logger.configure_backend(:console, max_buffer: 2_000)
  end
end
