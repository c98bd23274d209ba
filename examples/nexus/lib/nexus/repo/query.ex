defmodule Nexus.Repo.Query do
  @moduledoc """
  A query as data, and its rendering to SQL with parameters.

  Identifiers (tables, columns) are checked against a strict pattern before
  they are put in SQL text; values always travel as parameters. The
  placeholder style is the adapter's: `?` for SQLite, `$1` for PostgreSQL.
  """

  defstruct kind: :select,
            table: nil,
            select: ["*"],
            where: [],
            search: nil,
            fields: [],
            group_by: nil,
            aggregate: nil,
            order_by: nil,
            limit: nil,
            offset: nil,
            returning: nil

  @identifier ~r/^[a-z_][a-z0-9_]{0,62}$/
  @aggregates [:count, :sum, :avg, :min, :max]

  @doc "A SELECT of `table`; `opts`: where, search {cols, term}, order_by, limit, offset."
  def select(table, opts \\ []) do
    %__MODULE__{
      kind: :select,
      table: table,
      where: Keyword.get(opts, :where, []),
      search: Keyword.get(opts, :search),
      order_by: Keyword.get(opts, :order_by),
      limit: Keyword.get(opts, :limit),
      offset: Keyword.get(opts, :offset)
    }
  end

  @doc "An aggregate (count, sum, avg, min, max) of `field`, optionally grouped."
  def aggregate(table, op, field, opts \\ []) when op in @aggregates do
    %__MODULE__{
      kind: :aggregate,
      table: table,
      aggregate: {op, field},
      where: Keyword.get(opts, :where, []),
      group_by: Keyword.get(opts, :group_by)
    }
  end

  def insert(table, fields, returning),
    do: %__MODULE__{kind: :insert, table: table, fields: fields, returning: returning}

  def update(table, fields, where, returning),
    do: %__MODULE__{kind: :update, table: table, fields: fields, where: where, returning: returning}

  def delete(table, where, returning),
    do: %__MODULE__{kind: :delete, table: table, where: where, returning: returning}

  @doc "Renders to {sql, params}; raises ArgumentError on a bad identifier."
  def to_sql(%__MODULE__{} = q, style) do
    {sql, params} = render(q, style)
    {IO.iodata_to_binary(sql), Enum.reverse(params)}
  end

  defp render(%{kind: :select} = q, style) do
    {where_sql, params} = where_clause(q.where, q.search, style, [])

    sql = [
      "SELECT ",
      Enum.map_join(q.select, ", ", &column/1),
      " FROM ",
      ident(q.table),
      where_sql,
      order_clause(q.order_by),
      limit_clause(q.limit, q.offset)
    ]

    {sql, params}
  end

  defp render(%{kind: :aggregate, aggregate: {op, field}} = q, style) do
    {where_sql, params} = where_clause(q.where, nil, style, [])
    target = if op == :count and field in [nil, "*"], do: "*", else: ident(field)
    value = [Atom.to_string(op), "(", target, ") AS value"]

    case q.group_by do
      nil ->
        {["SELECT ", value, " FROM ", ident(q.table), where_sql], params}

      group ->
        g = ident(group)

        {["SELECT ", g, " AS grp, ", value, " FROM ", ident(q.table), where_sql, " GROUP BY ", g,
          " ORDER BY ", g], params}
    end
  end

  defp render(%{kind: :insert} = q, style) do
    {names, values} = Enum.unzip(q.fields)
    {holders, params} = placeholders(values, style, [])

    {["INSERT INTO ", ident(q.table), " (", Enum.map_join(names, ", ", &ident/1), ") VALUES (",
      Enum.join(holders, ", "), ")", returning(q.returning)], params}
  end

  defp render(%{kind: :update} = q, style) do
    {sets, params} =
      Enum.reduce(q.fields, {[], []}, fn {name, value}, {sets, params} ->
        {holder, params} = placeholder(value, style, params)
        {[[ident(name), " = ", holder] | sets], params}
      end)

    {where_sql, params} = where_clause(q.where, nil, style, params)

    {["UPDATE ", ident(q.table), " SET ", Enum.intersperse(Enum.reverse(sets), ", "), where_sql,
      returning(q.returning)], params}
  end

  defp render(%{kind: :delete} = q, style) do
    {where_sql, params} = where_clause(q.where, nil, style, [])
    {["DELETE FROM ", ident(q.table), where_sql, returning(q.returning)], params}
  end

  defp where_clause([], nil, _style, params), do: {"", params}

  defp where_clause(where, search, style, params) do
    {conds, params} =
      Enum.reduce(where, {[], params}, fn {name, value}, {acc, params} ->
        {holder, params} = placeholder(value, style, params)
        {[[ident(name), " = ", holder] | acc], params}
      end)

    {conds, params} = search_condition(search, style, conds, params)
    {[" WHERE ", Enum.intersperse(Enum.reverse(conds), " AND ")], params}
  end

  defp search_condition(nil, _style, conds, params), do: {conds, params}
  defp search_condition({[], _term}, _style, conds, params), do: {conds, params}

  defp search_condition({columns, term}, style, conds, params) do
    pattern = "%" <> escape_like(term) <> "%"

    {likes, params} =
      Enum.reduce(columns, {[], params}, fn col, {acc, params} ->
        {holder, params} = placeholder(pattern, style, params)
        {[["LOWER(", ident(col), ") LIKE LOWER(", holder, ") ESCAPE '\\'"] | acc], params}
      end)

    {[["(", Enum.intersperse(Enum.reverse(likes), " OR "), ")"] | conds], params}
  end

  defp escape_like(term) do
    term |> String.replace("\\", "\\\\") |> String.replace("%", "\\%") |> String.replace("_", "\\_")
  end

  defp order_clause(nil), do: ""
  defp order_clause({col, :desc}), do: [" ORDER BY ", ident(col), " DESC"]
  defp order_clause({col, :asc}), do: [" ORDER BY ", ident(col), " ASC"]
  defp order_clause(col), do: [" ORDER BY ", ident(col)]

  defp limit_clause(nil, _), do: ""
  defp limit_clause(limit, nil) when is_integer(limit), do: [" LIMIT ", Integer.to_string(limit)]

  defp limit_clause(limit, offset) when is_integer(limit) and is_integer(offset),
    do: [" LIMIT ", Integer.to_string(limit), " OFFSET ", Integer.to_string(offset)]

  defp returning(nil), do: ""
  defp returning(col), do: [" RETURNING ", ident(col)]

  defp placeholders(values, style, params) do
    Enum.reduce(values, {[], params}, fn v, {hs, params} ->
      {h, params} = placeholder(v, style, params)
      {hs ++ [h], params}
    end)
  end

  defp placeholder(value, :question, params), do: {"?", [value | params]}

  defp placeholder(value, :dollar, params),
    do: {"$" <> Integer.to_string(length(params) + 1), [value | params]}

  defp column("*"), do: "*"
  defp column(name), do: ident(name)

  @doc "Returns the identifier when it is safe to put in SQL text, else raises."
  def ident(name) when is_atom(name), do: ident(Atom.to_string(name))

  def ident(name) when is_binary(name) do
    if Regex.match?(@identifier, name),
      do: name,
      else: raise(ArgumentError, "not a valid SQL identifier: #{inspect(name)}")
  end
end
