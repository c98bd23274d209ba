defmodule Nexus.Controllers.Resource do
  @moduledoc """
  CRUD over one table, shared by the resource controllers. A controller
  `use`s this module and may override `prepare/3` (called with the cast
  fields before an insert or update) to add defaults or enforce rules.
  """
  alias Nexus.{Params, Repo, Validation, View}
  alias Nexus.HTTP.Response

  @callback prepare(fields :: map, Nexus.Registry.TableInfo.t(), :create | :update) ::
              {:ok, map} | {:error, term}

  defmacro __using__(_opts) do
    quote do
      @behaviour Nexus.Controllers.Resource
      alias Nexus.Controllers.Resource

      def index(req, info), do: Resource.index(req, info)
      def show(req, info, id), do: Resource.show(req, info, id)
      def create(req, info), do: Resource.create(__MODULE__, req, info)
      def update(req, info, id), do: Resource.update(__MODULE__, req, info, id)
      def delete(req, info, id), do: Resource.delete(req, info, id)

      @impl true
      def prepare(fields, _info, _action), do: {:ok, fields}
      defoverridable prepare: 3
    end
  end

  def index(req, info) do
    with {:ok, limit} <- Params.int(req.query, "limit", 20, 1, info.max_page),
         {:ok, offset} <- Params.int(req.query, "offset", 0, 0, 1_000_000),
         {:ok, order} <- order(req.query, info),
         {:ok, rows} <- Repo.all(info.name, limit: limit, offset: offset, order_by: order) do
      Response.json(200, %{"data" => View.render_many(info.name, rows), "limit" => limit, "offset" => offset})
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, info.name)
    end
  end

  def show(_req, info, id_text) do
    with {:ok, id} <- Params.id(id_text),
         {:ok, row} <- Repo.get(info.name, id) do
      Response.json(200, %{"data" => View.render(info.name, row)})
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, "#{info.name} #{id_text}")
    end
  end

  def create(controller, req, info) do
    with {:ok, body} <- Nexus.JSON.decode(req.body),
         {:ok, fields} <- Validation.cast(body, info, :create),
         {:ok, fields} <- controller.prepare(fields, info, :create),
         {:ok, id} <- Repo.insert(info.name, fields) do
      Response.json(201, %{"id" => id, "table" => info.name, "data" => Map.put(fields, "id", id)})
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, info.name)
    end
  end

  def update(controller, req, info, id_text) do
    with {:ok, id} <- Params.id(id_text),
         {:ok, body} <- Nexus.JSON.decode(req.body),
         {:ok, fields} <- Validation.cast(body, info, :update),
         :ok <- non_empty(fields),
         {:ok, fields} <- controller.prepare(fields, info, :update),
         {:ok, _} <- Repo.update(info.name, id, fields) do
      Response.json(200, %{"id" => id, "table" => info.name, "updated" => Map.keys(fields)})
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, "#{info.name} #{id_text}")
    end
  end

  def delete(_req, info, id_text) do
    with {:ok, id} <- Params.id(id_text),
         {:ok, _} <- Repo.delete(info.name, id) do
      Response.no_content()
    else
      {:error, message} when is_binary(message) -> Response.bad_request(message)
      {:error, reason} -> Response.from_error(reason, "#{info.name} #{id_text}")
    end
  end

  defp non_empty(fields) when map_size(fields) == 0, do: {:error, "nothing to update"}
  defp non_empty(_), do: :ok

  defp order(query, info) do
    case Map.get(query, "order_by") do
      nil ->
        {:ok, info.primary_key}

      col ->
        if col in Nexus.Registry.TableInfo.column_names(info) do
          {:ok, if(Map.get(query, "desc") in ["1", "true"], do: {col, :desc}, else: {col, :asc})}
        else
          {:error, "order_by: no column #{col} in #{info.name}"}
        end
    end
  end
end
