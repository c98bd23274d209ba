defmodule Nexus.Controllers.Users do
  @moduledoc "users: e-mail addresses must look like one; created_at is set here."
  use Nexus.Controllers.Resource

  @impl true
  def prepare(fields, _info, action) do
    with :ok <- check_email(fields["email"]) do
      case action do
        :create -> {:ok, Map.put(fields, "created_at", System.os_time(:second))}
        :update -> {:ok, fields}
      end
    end
  end

  defp check_email(nil), do: :ok

  defp check_email(email) do
    if Regex.match?(~r/^[^@\s]+@[^@\s]+\.[a-z]{2,}$/i, email),
      do: :ok,
      else: {:error, {:invalid, "email is not an e-mail address"}}
  end
end
