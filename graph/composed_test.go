package graph

import (
	"math"
	"testing"

	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/hal/haltest"
	"github.com/webtensor/webtensor/tensor"
)

// requiredCPU names a backend of this test binary: the CPU without hal's
// optional tier (haltest.RequiredOnly), so that the ops that have a fused
// kernel on the CPU run tensor's compositions of required kernels there.
const requiredCPU = "cpu-required"

func init() {
	cpu, ok := hal.Lookup("cpu")
	if !ok {
		panic("graph tests: no cpu backend registered")
	}
	hal.Register(hal.Backend{
		Name:     requiredCPU,
		Adapters: cpu.Adapters,
		Open: func(index int) (hal.Device, error) {
			d, err := cpu.Open(index)
			if err != nil {
				return nil, err
			}
			return haltest.RequiredOnly(d), nil
		},
	})
}

// TestGradsThroughCompositions runs every gradient case on the CPU twice,
// with the fused kernels of hal's optional tier (GELU, SiLU, Softplus,
// softmax, …) and without them, and requires the same values and
// gradients in float64: the compositions tensor falls back to are
// differentiated as the kernels are. Both paths against each other; each
// against finite differences is TestGradCheck.
func TestGradsThroughCompositions(t *testing.T) {
	fused := cpuDevice(t)
	composed, err := tensor.Open(requiredCPU)
	if err != nil {
		t.Fatal(err)
	}
	if composed.Capabilities().Supports(hal.GELU.Kernel(), hal.Float64) {
		t.Fatalf("%s still declares the optional tier", requiredCPU)
	}
	const tol = 1e-10
	for _, c := range gradCases {
		t.Run(c.name, func(t *testing.T) {
			if c.cpuOnly {
				t.Skip("a kernel without a composition: the required tier cannot run it")
			}
			floats, ints := c.draw()
			n, _ := outputSize(t, c, fused, floats, ints)
			seed := randomLike(caseRNG(c.name+"/seed"), n)
			wantLoss, want := c.vjp(t, fused, tensor.Float64, floats, ints, seed)
			gotLoss, got := c.vjp(t, composed, tensor.Float64, floats, ints, seed)
			if d := math.Abs(gotLoss - wantLoss); !(d <= tol*(1+math.Abs(wantLoss))) {
				t.Fatalf("value: composed %.17g, fused %.17g", gotLoss, wantLoss)
			}
			requireGradsClose(t, "composed", "fused", got, want, tol)
		})
	}
}
