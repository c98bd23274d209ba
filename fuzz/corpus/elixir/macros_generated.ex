defmodule Seq do
  defmacro defseq(name, code) do
    quote bind_quoted: [name: name, code: code] do
      def unquote(name)(), do: code
    end
  end

  defmacro __using__(_) do
    quote do
      import unquote(__MODULE__)
      @before_compile unquote(__MODULE__)
      def call(a, b \\ 1), do: {a, b}
    end
  end
end

defmodule G do
  use Seq
  use Base, :controller
  import Seq
  require Record
  Record.defrecord(:user, name: nil)
  @derive [Inspect, {Jason.Encoder, only: [:a]}]
  defstruct [:a]
  @levels [:info, :debug]
  for level <- @levels do
    defmacro unquote(level)(msg, meta \\ []), do: {msg, meta}
  end
  for n <- [1, 2], do: defseq(:"font_#{n}", n)
  defmacro (..), do: 1
  def unquote(:"~~~")(x), do: "#{x}" <> x[:k] <> inspect(x)
  Kernel.def direct(x), do: raise(ArgumentError, "bad #{x}")
  scope "/" do
    get "/", Page, :index
  end
end
