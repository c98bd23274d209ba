defmodule ShopTest do
  use ExUnit.Case
  describe "d" do
    test "t", %{a: a} do
      assert A.f(a)
    end
  end
end
