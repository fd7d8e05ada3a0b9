package nn

import (
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// The activations are stateless modules, usable as values
// (nn.NewSequential(l1, nn.ReLU{}, l2)). They behave the same in training
// and evaluation: SetTraining does nothing and Training reports false.

// ReLU is max(x, 0), as torch.nn.ReLU.
type ReLU struct{}

// Forward applies ReLU.
func (ReLU) Forward(x *graph.Value) *graph.Value { return graph.ReLU(x) }

// Parameters returns nothing.
func (ReLU) Parameters() []Named { return nil }

// Buffers returns nothing.
func (ReLU) Buffers() []Named { return nil }

// SetTraining does nothing.
func (ReLU) SetTraining(bool) {}

// Training reports false.
func (ReLU) Training() bool { return false }

// Tanh is the hyperbolic tangent, as torch.nn.Tanh.
type Tanh struct{}

// Forward applies tanh.
func (Tanh) Forward(x *graph.Value) *graph.Value { return graph.Tanh(x) }

// Parameters returns nothing.
func (Tanh) Parameters() []Named { return nil }

// Buffers returns nothing.
func (Tanh) Buffers() []Named { return nil }

// SetTraining does nothing.
func (Tanh) SetTraining(bool) {}

// Training reports false.
func (Tanh) Training() bool { return false }

// Sigmoid is 1/(1+e⁻ˣ), as torch.nn.Sigmoid.
type Sigmoid struct{}

// Forward applies the logistic sigmoid.
func (Sigmoid) Forward(x *graph.Value) *graph.Value { return graph.Sigmoid(x) }

// Parameters returns nothing.
func (Sigmoid) Parameters() []Named { return nil }

// Buffers returns nothing.
func (Sigmoid) Buffers() []Named { return nil }

// SetTraining does nothing.
func (Sigmoid) SetTraining(bool) {}

// Training reports false.
func (Sigmoid) Training() bool { return false }

// GELU is x·Φ(x), as torch.nn.GELU: exact (with erf) by default, the tanh
// approximation with Approximate (approximate="tanh").
type GELU struct{ Approximate bool }

// Forward applies GELU.
func (g GELU) Forward(x *graph.Value) *graph.Value {
	if g.Approximate {
		return graph.GELUTanh(x)
	}
	return graph.GELU(x)
}

// Parameters returns nothing.
func (GELU) Parameters() []Named { return nil }

// Buffers returns nothing.
func (GELU) Buffers() []Named { return nil }

// SetTraining does nothing.
func (GELU) SetTraining(bool) {}

// Training reports false.
func (GELU) Training() bool { return false }

// SiLU is x·σ(x), as torch.nn.SiLU.
type SiLU struct{}

// Forward applies SiLU.
func (SiLU) Forward(x *graph.Value) *graph.Value { return graph.SiLU(x) }

// Parameters returns nothing.
func (SiLU) Parameters() []Named { return nil }

// Buffers returns nothing.
func (SiLU) Buffers() []Named { return nil }

// SetTraining does nothing.
func (SiLU) SetTraining(bool) {}

// Training reports false.
func (SiLU) Training() bool { return false }

// LeakyReLU is x for x ≥ 0, Alpha·x below, as torch.nn.LeakyReLU. The
// zero value has slope 0 (a ReLU): PyTorch's default slope, 0.01, must be
// given.
type LeakyReLU struct{ Alpha float64 }

// Forward applies LeakyReLU.
func (l LeakyReLU) Forward(x *graph.Value) *graph.Value { return graph.LeakyReLU(x, l.Alpha) }

// Parameters returns nothing.
func (LeakyReLU) Parameters() []Named { return nil }

// Buffers returns nothing.
func (LeakyReLU) Buffers() []Named { return nil }

// SetTraining does nothing.
func (LeakyReLU) SetTraining(bool) {}

// Training reports false.
func (LeakyReLU) Training() bool { return false }

// Dropout zeroes each element with probability P in training and scales
// the rest by 1/(1−P), as torch.nn.Dropout; in evaluation it passes x
// through. The masks come from Gen, so a seed replays them.
type Dropout struct {
	P   float64
	Gen *tensor.Generator
	mode
}

// NewDropout returns a Dropout layer, in training mode.
func NewDropout(p float64, gen *tensor.Generator) *Dropout {
	if !(p >= 0 && p <= 1) {
		misuse("NewDropout", "probability %v is outside [0, 1]", p)
	}
	return &Dropout{P: p, Gen: gen, mode: mode{true}}
}

// Forward applies dropout in training, the identity in evaluation.
func (d *Dropout) Forward(x *graph.Value) *graph.Value {
	return graph.Dropout(x, d.P, d.training, d.Gen)
}

// Parameters returns nothing.
func (d *Dropout) Parameters() []Named { return nil }

// Buffers returns nothing.
func (d *Dropout) Buffers() []Named { return nil }
