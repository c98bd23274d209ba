defmodule A.B do
  @moduledoc false
  alias A.{C, D}
  alias E.F, as: G
  import H
  require I, as: J
  use K, opt: L.m()
  @behaviour M
  @callback cb(integer) :: :ok
  defstruct [:a, b: 1]
  defmodule N do
    def n(x \\ 1) when x > 0 and is_integer(x), do: %__MODULE__{} |> C.f(x) |> g()
  end
  @doc "d"
  @spec f(t) :: t
  def f(x) do
    case x do
      1 -> if x, do: &C.h/1, else: &g/1
      _ -> cond do
        x || y -> for a <- x, do: fn b -> b end
        true -> with {:ok, y} <- :ets.lookup(x, 1), do: try(do: y, rescue: (_ -> 1))
      end
    end
  end
  defp g(x), do: receive(do: (x -> x), after: (1 -> N.n()))
  defmacro m(x), do: quote(do: unquote(x) + G.z())
  defguard is_g(x) when x > 1
  defdelegate dd(a, b \\ 2), to: G, as: :other
  def unquote(:do)(x), do: "#{x.y} #{C.s()}" <> ~s(#{D.t()}) <> ~S(#{no}) <> 'c#{e()}'
end
defprotocol P do
  def p(x)
end
defimpl P, for: [A.B, List] do
  def p(x), do: x
end
