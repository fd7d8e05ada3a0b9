package graph_test

import (
	"fmt"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// The gradient of log det Σ, computed as 2·Σ log diag(L) from the
// Cholesky factor Σ = L·Lᵀ (the Gaussian-process log-likelihood's term),
// is Σ⁻¹.
func ExampleCholesky() {
	dev, _ := tensor.Open("cpu")
	sigma := graph.Param(tensor.FromFloat64(dev, []float64{4, 2, 2, 3}, 2, 2))
	l := graph.Cholesky(sigma, false)
	eye := graph.Constant(tensor.Eye(dev, 2, 2).Cast(tensor.Float64))
	logdet := graph.Mul(l, eye).Sum([]int{-1}, false).Log().Sum(nil, false).MulScalar(2)
	if err := logdet.Backward(); err != nil {
		panic(err)
	}
	inv := graph.Inv(sigma)
	v, _ := logdet.Item()
	g, _ := sigma.Grad().Float64s()
	want, _ := inv.Float64s()
	fmt.Printf("log det = %.4f\ngrad    = %.4f\nΣ⁻¹     = %.4f\n", v, g, want)
	// Output:
	// log det = 2.0794
	// grad    = [0.3750 -0.2500 -0.2500 0.5000]
	// Σ⁻¹     = [0.3750 -0.2500 -0.2500 0.5000]
}
