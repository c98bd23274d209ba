defmodule Nexus.Params do
  @moduledoc "Validation of query-string and body parameters."

  @doc "An integer parameter in min..max, or the default when absent."
  def int(params, key, default, min, max) do
    case Map.get(params, key) do
      nil ->
        {:ok, default}

      n when is_integer(n) and n >= min and n <= max ->
        {:ok, n}

      text when is_binary(text) ->
        case Integer.parse(text) do
          {n, ""} when n >= min and n <= max -> {:ok, n}
          _ -> {:error, "#{key} must be an integer in #{min}..#{max}"}
        end

      _ ->
        {:error, "#{key} must be an integer in #{min}..#{max}"}
    end
  end

  @doc "A required non-empty string parameter of at most `max` bytes."
  def string(params, key, max) do
    case Map.get(params, key) do
      s when is_binary(s) and s != "" and byte_size(s) <= max -> {:ok, s}
      nil -> {:error, "#{key} is required"}
      _ -> {:error, "#{key} must be a string of 1..#{max} bytes"}
    end
  end

  @doc "One of `allowed` (strings), or the default when absent."
  def one_of(params, key, allowed, default) do
    case Map.get(params, key, default) do
      v when is_binary(v) -> if v in allowed, do: {:ok, v}, else: {:error, "#{key} must be one of #{Enum.join(allowed, ", ")}"}
      _ -> {:error, "#{key} must be one of #{Enum.join(allowed, ", ")}"}
    end
  end

  @doc "Parses a path segment as a positive integer id."
  def id(text) do
    case Integer.parse(text) do
      {n, ""} when n > 0 and n < 4_611_686_018_427_387_904 -> {:ok, n}
      _ -> {:error, "the id must be a positive integer"}
    end
  end
end
