defmodule Nexus.HTTP.Handler do
  @moduledoc """
  The `:inets` httpd callback module: turns httpd's mod record into a
  `Nexus.HTTP.Request`, runs it through `Nexus.Router`, and hands the
  response back to httpd. (`do` is a reserved word in Elixir, hence the
  `unquote`.)
  """
  alias Nexus.HTTP.Request

  @max_body 1_048_576

  def unquote(:do)(mod_record) do
    request = Request.from_mod(mod_record)

    {status, content_type, body} =
      if byte_size(request.body) > @max_body,
        do: Nexus.HTTP.Response.error(413, "request body over #{@max_body} bytes"),
        else: Nexus.Router.handle(request)

    body = IO.iodata_to_binary(body)

    head = [
      code: status,
      content_type: String.to_charlist(content_type),
      content_length: Integer.to_charlist(byte_size(body))
    ]

    {:proceed, [response: {:response, head, body}]}
  end
end
