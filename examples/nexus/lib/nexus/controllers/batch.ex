defmodule Nexus.Controllers.Batch do
  @moduledoc """
  POST /api/batch {"requests": [{"method": "GET", "path": "/api/users/1",
  "body": {...}}]}: up to 20 API requests run in order through the router,
  each logged like a request of its own. Batches do not nest.
  """
  alias Nexus.HTTP.{Request, Response}

  @max_requests 20

  def run(req) do
    with {:ok, %{"requests" => list}} when is_list(list) <- Nexus.JSON.decode(req.body),
         :ok <- size(list) do
      parts = Enum.map(list, &run_one(req, &1))
      {200, "application/json", [~s({"responses":[), Enum.intersperse(parts, ?,), "]}"]}
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      _ -> Response.bad_request(~s(the body must be {"requests": [...]}))
    end
  end

  defp size(list) when length(list) <= @max_requests, do: :ok
  defp size(_), do: {:error, "at most #{@max_requests} requests per batch"}

  defp run_one(parent, %{"method" => method, "path" => "/" <> _ = path} = item) when is_binary(method) do
    body = if Map.has_key?(item, "body"), do: Nexus.JSON.encode!(item["body"]), else: ""
    sub = Request.new(method, path, parent.headers, body)

    {status, content_type, payload} =
      if sub.segments == ["api", "batch"],
        do: Response.bad_request("batches do not nest"),
        else: timed(sub)

    [~s({"status":), Integer.to_string(status), ~s(,"body":), embed(content_type, payload), ?}]
  end

  defp run_one(_parent, _item),
    do: [~s({"status":400,"body":), Nexus.JSON.encode(%{"error" => "each request needs method and path"}), ?}]

  defp timed(sub) do
    started = System.monotonic_time(:microsecond)
    response = Nexus.Router.dispatch(sub)
    Nexus.RequestLog.log(sub, elem(response, 0), System.monotonic_time(:microsecond) - started)
    response
  end

  defp embed("application/json", ""), do: "null"
  defp embed("application/json", payload), do: payload
  defp embed(_other, payload), do: Nexus.JSON.encode(IO.iodata_to_binary(payload))
end
