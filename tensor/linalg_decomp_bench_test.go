package tensor_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// BenchmarkLinalg times each linalg op on the CPU on a batch of 64
// well-conditioned 32×32 matrices (and 128×128 alone), float32 and
// float64; Solve/via-Inv is A⁻¹·B for comparison with Solve's LU solve.
func BenchmarkLinalg(b *testing.B) {
	cpu := testdevice.CPU(b)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, shape := range [][]int{{64, 32, 32}, {128, 128}} {
			r := len(shape)
			n := shape[r-1]
			rng := rand.New(rand.NewPCG(1, 2))
			count := 1
			for _, d := range shape {
				count *= d
			}
			vals := make([]float64, count)
			for i := range vals {
				vals[i] = 2*rng.Float64() - 1
				if (i/n)%n == i%n {
					vals[i] += float64(n) // dominant diagonal: SPD-ish after symmetrizing
				}
			}
			base := tensor.FromFloat64(cpu, vals, shape...)
			a := base.Cast(dt)
			sym := tensor.Add(a, a.Transpose(-1, -2))
			rhs := tensor.Ones(cpu, append(shape[:r-1:r-1], 8)...).Cast(dt)
			ops := []struct {
				name string
				run  func() []*tensor.Tensor
			}{
				{"Solve", func() []*tensor.Tensor { return []*tensor.Tensor{tensor.Solve(a, rhs)} }},
				{"Solve/via-Inv", func() []*tensor.Tensor {
					inv := tensor.Inv(a)
					return []*tensor.Tensor{inv, tensor.MatMul(inv, rhs)}
				}},
				{"Inv", func() []*tensor.Tensor { return []*tensor.Tensor{tensor.Inv(a)} }},
				{"Cholesky", func() []*tensor.Tensor { return []*tensor.Tensor{tensor.Cholesky(sym, false)} }},
				{"QR", func() []*tensor.Tensor { q, r := tensor.QR(a, tensor.QRReduced); return []*tensor.Tensor{q, r} }},
				{"SVD", func() []*tensor.Tensor { u, s, v := tensor.SVD(a, false); return []*tensor.Tensor{u, s, v} }},
				{"SVDVals", func() []*tensor.Tensor { return []*tensor.Tensor{tensor.SVDVals(a)} }},
				{"Eigh", func() []*tensor.Tensor { w, v := tensor.Eigh(sym, false); return []*tensor.Tensor{w, v} }},
			}
			for _, op := range ops {
				b.Run(fmt.Sprintf("%s/%v/%v", op.name, dt, shape), func(b *testing.B) {
					for b.Loop() {
						outs := op.run()
						if err := outs[len(outs)-1].Err(); err != nil {
							b.Fatal(err)
						}
						for _, o := range outs {
							o.Release()
						}
					}
				})
			}
			for _, t := range []*tensor.Tensor{base, a, sym, rhs} {
				t.Release()
			}
		}
	}
}
