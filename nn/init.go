package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// The init functions replace a leaf's tensor (a parameter, usually) with
// fresh random values of the same shape, dtype and device, drawn from gen,
// as torch.nn.init's functions of the same names fill a tensor in place.
// Draws happen on the value's device in Float32 and are cast to its dtype,
// so one seed gives the same network on every device.

// Fans returns the fan-in and fan-out of a weight of shape, as PyTorch
// computes them: shape[1] and shape[0] times the receptive field (the
// product of the remaining axes). A vector's fans are both its length.
func Fans(shape []int) (fanIn, fanOut int) {
	switch len(shape) {
	case 0:
		panic(&tensor.Error{Op: "nn.Fans", Msg: "a scalar has no fan-in or fan-out"})
	case 1:
		return shape[0], shape[0]
	}
	field := 1
	for _, d := range shape[2:] {
		field *= d
	}
	return shape[1] * field, shape[0] * field
}

// Uniform fills w with values uniform in [lo, hi). As every init function
// here, it replaces w's tensor (SetTensor) by a draw of the same shape,
// dtype and device, made in Float32 on w's device and cast to its dtype.
func Uniform(w *graph.Value, lo, hi float64, gen *tensor.Generator) {
	u := gen.Rand(w.Device(), w.Shape()...)
	defer u.Release()
	scaled := u.MulScalar(hi - lo)
	defer scaled.Release()
	fill(w, scaled.AddScalar(lo))
}

// Normal fills w with values drawn from N(mean, std²).
func Normal(w *graph.Value, mean, std float64, gen *tensor.Generator) {
	n := gen.Randn(w.Device(), w.Shape()...)
	defer n.Release()
	scaled := n.MulScalar(std)
	defer scaled.Release()
	fill(w, scaled.AddScalar(mean))
}

// Fill fills w with c.
func Fill(w *graph.Value, c float64) {
	w.SetTensor(tensor.Full(w.Device(), w.DType(), c, w.Shape()...))
}

// leakyReLUGain is torch.nn.init.calculate_gain("leaky_relu", a):
// √(2 / (1 + a²)); a = 0 is ReLU's gain √2.
func leakyReLUGain(a float64) float64 { return math.Sqrt(2 / (1 + a*a)) }

// KaimingUniform fills w as torch.nn.init.kaiming_uniform_(w, a) with
// mode "fan_in" and the leaky-ReLU gain: U(±gain·√(3/fan_in)), gain =
// √(2/(1+a²)). PyTorch's Linear and Conv layers use a = √5, which gives
// U(±1/√fan_in).
func KaimingUniform(w *graph.Value, a float64, gen *tensor.Generator) {
	fanIn, _ := Fans(w.Shape())
	checkFan("KaimingUniform", fanIn)
	bound := leakyReLUGain(a) * math.Sqrt(3/float64(fanIn))
	Uniform(w, -bound, bound, gen)
}

// KaimingNormal fills w as torch.nn.init.kaiming_normal_(w, a) with mode
// "fan_in": N(0, (gain/√fan_in)²), gain = √(2/(1+a²)).
func KaimingNormal(w *graph.Value, a float64, gen *tensor.Generator) {
	fanIn, _ := Fans(w.Shape())
	checkFan("KaimingNormal", fanIn)
	Normal(w, 0, leakyReLUGain(a)/math.Sqrt(float64(fanIn)), gen)
}

// XavierUniform fills w as torch.nn.init.xavier_uniform_(w, gain):
// U(±gain·√(6/(fan_in+fan_out))).
func XavierUniform(w *graph.Value, gain float64, gen *tensor.Generator) {
	fanIn, fanOut := Fans(w.Shape())
	checkFan("XavierUniform", fanIn+fanOut)
	bound := gain * math.Sqrt(6/float64(fanIn+fanOut))
	Uniform(w, -bound, bound, gen)
}

// XavierNormal fills w as torch.nn.init.xavier_normal_(w, gain):
// N(0, (gain·√(2/(fan_in+fan_out)))²).
func XavierNormal(w *graph.Value, gain float64, gen *tensor.Generator) {
	fanIn, fanOut := Fans(w.Shape())
	checkFan("XavierNormal", fanIn+fanOut)
	Normal(w, 0, gain*math.Sqrt(2/float64(fanIn+fanOut)), gen)
}

func checkFan(op string, fan int) {
	if fan <= 0 {
		panic(&tensor.Error{Op: "nn." + op, Msg: fmt.Sprintf("fan %d of an empty weight", fan)})
	}
}

// fill moves the Float32 draw t into w, cast to w's dtype, taking over the
// caller's reference to t.
func fill(w *graph.Value, t *tensor.Tensor) {
	if t.DType() != w.DType() {
		c := t.Cast(w.DType())
		t.Release()
		t = c
	}
	w.SetTensor(t)
}

// uniformParam makes a parameter of shape drawn from U(±bound).
func uniformParam(dev *tensor.Device, bound float64, gen *tensor.Generator, shape ...int) *graph.Value {
	p := graph.Param(tensor.Zeros(dev, shape...))
	Uniform(p, -bound, bound, gen)
	return p
}

// fullParam makes a parameter of shape filled with c.
func fullParam(dev *tensor.Device, c float64, shape ...int) *graph.Value {
	return graph.Param(tensor.Full(dev, tensor.Float32, c, shape...))
}
