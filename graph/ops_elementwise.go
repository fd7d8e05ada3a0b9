package graph

import "github.com/webtensor/webtensor/tensor"

// Add is tensor.Add (a + b, broadcasting), recorded.
func Add(a, b *Value) *Value {
	t := live("Add", a, b)
	return record("Add", tensor.Add(t[0], t[1]), []*Value{a, b}, nil)
}

// Mul is tensor.Mul (a · b, broadcasting), recorded.
func Mul(a, b *Value) *Value {
	t := live("Mul", a, b)
	return record("Mul", tensor.Mul(t[0], t[1]), []*Value{a, b}, nil)
}
