defmodule Nexus.Controllers.Stats do
  @moduledoc """
  GET /api/stats/:table?op=count|sum|avg|min|max&field=F&group_by=G: one
  aggregate of a numeric column, optionally per value of another column.
  """
  alias Nexus.{Params, Repo}
  alias Nexus.HTTP.Response
  alias Nexus.Registry.TableInfo

  def show(req, info) do
    with {:ok, op} <- Params.one_of(req.query, "op", ~w(count sum avg min max), "count"),
         {:ok, field} <- field(req.query, info, op),
         {:ok, group} <- group(req.query, info),
         {:ok, value} <- Repo.aggregate(info.name, String.to_existing_atom(op), field, group_by: group) do
      Response.json(200, %{"table" => info.name, "op" => op, "field" => field, "value" => render(value)})
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, info.name)
    end
  end

  defp field(query, info, op) do
    case {op, Map.get(query, "field")} do
      {"count", nil} -> {:ok, "*"}
      {_, nil} -> {:error, "field is required for #{op}"}
      {_, f} -> if TableInfo.numeric?(info, f), do: {:ok, f}, else: {:error, "field #{f} is not a numeric column of #{info.name}"}
    end
  end

  defp group(query, info) do
    case Map.get(query, "group_by") do
      nil -> {:ok, nil}
      g -> if g in TableInfo.column_names(info), do: {:ok, g}, else: {:error, "group_by: no column #{g}"}
    end
  end

  defp render(groups) when is_list(groups), do: Enum.map(groups, fn {g, v} -> %{"group" => g, "value" => v} end)
  defp render(value), do: value
end
