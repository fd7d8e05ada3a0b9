package graph

import "github.com/webtensor/webtensor/tensor"

// Gradient cases of the linalg ops (rules_linalg.go), checked against
// finite differences in float64 by TestGradCheck and across devices by
// TestGradsAgreeAcrossDevices. Inputs are made well conditioned by
// constant shifts (a scaled identity, distinct diagonal offsets), and the
// results of QR, SVD and Eigh enter gauge-invariant expressions, or QR's
// LAPACK-fixed signs, which do not flip under the small steps of finite
// differences.

// diagonal returns the values of an n×n constant with d on its diagonal.
func diagonal(d ...float64) []float64 {
	n := len(d)
	out := make([]float64, n*n)
	for i, v := range d {
		out[i*n+i] = v
	}
	return out
}

func constantInput(values []float64, shape ...int) input {
	return input{shape: shape, values: values, constant: true}
}

func flat(x *Value) *Value { return x.Reshape(-1) }

func init() {
	gradCases = append(gradCases,
		gradCase{name: "Solve/matrix", cpuOnly: true,
			inputs: []input{{shape: []int{2, 3, 3}}, constantInput(diagonal(6, 6, 6), 3, 3), {shape: []int{2, 3, 2}}},
			f:      func(in []*Value) *Value { return Solve(Add(in[0], in[1]), in[2]) }},
		gradCase{name: "Solve/vector+broadcast", cpuOnly: true,
			inputs: []input{{shape: []int{4, 4}}, constantInput(diagonal(7, 7, 7, 7), 4, 4), {shape: []int{4}}, {shape: []int{2, 4, 1}}},
			f: func(in []*Value) *Value {
				a := Add(in[0], in[1])
				return Concat(0, Solve(a, in[2]), flat(Solve(a, in[3])))
			}},
		gradCase{name: "Inv", cpuOnly: true,
			inputs: []input{{shape: []int{2, 3, 3}}, constantInput(diagonal(6, 6, 6), 3, 3)},
			f:      func(in []*Value) *Value { return Inv(Add(in[0], in[1])) }},
		gradCase{name: "Cholesky", cpuOnly: true,
			inputs: []input{{shape: []int{2, 4, 4}}, constantInput(diagonal(2, 2, 2, 2), 4, 4)},
			f: func(in []*Value) *Value {
				a := Add(MatMul(in[0], in[0].Transpose(-2, -1)), in[1])
				return Concat(0, flat(Cholesky(a, false)), flat(Cholesky(a, true)))
			}},
		gradCase{name: "QR/tall", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{2, 5, 3}}},
			f: func(in []*Value) *Value {
				q, r := QR(in[0], tensor.QRReduced)
				return Concat(0, flat(q), flat(r))
			}},
		gradCase{name: "QR/wide", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{2, 3, 5}}},
			f: func(in []*Value) *Value {
				q, r := QR(in[0], tensor.QRReduced)
				return Concat(0, flat(q), flat(r))
			}},
		gradCase{name: "QR/square-complete", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{3, 3}}},
			f: func(in []*Value) *Value {
				q, r := QR(in[0], tensor.QRComplete)
				return Concat(0, flat(q), flat(r))
			}},
		gradCase{name: "SVD/tall", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{5, 3}}},
			f:      svdInvariants(false)},
		gradCase{name: "SVD/wide-full", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{2, 3, 4}}},
			f:      svdInvariants(true)},
		gradCase{name: "SVDVals", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{4, 4}}},
			f:      func(in []*Value) *Value { return SVDVals(in[0]) }},
		gradCase{name: "Eigh", cpuOnly: true, firstOrder: true,
			inputs: []input{{shape: []int{2, 4, 4}}, constantInput(diagonal(0, 3, 6, 9), 4, 4), constantInput(diagonal(1, -2, 3, 0.5), 4, 4)},
			f: func(in []*Value) *Value {
				a := Add(Add(in[0], in[0].Transpose(-2, -1)), in[1])
				w, v := Eigh(a, true)
				// V·C·Vᵀ is invariant to each eigenvector's sign.
				return Concat(0, flat(w), flat(MatMul(MatMul(v, in[2]), v.Transpose(-2, -1))), flat(EigvalsH(a, false)))
			}},
	)
}

// svdInvariants is the gauge-invariant image of an SVD: S, U·Uᵀ (over the
// first k vectors) and Vhᵀ·diag(S)·Vh.
func svdInvariants(full bool) func(in []*Value) *Value {
	return func(in []*Value) *Value {
		u, s, vh := SVD(in[0], full)
		k := s.Shape()[len(s.Shape())-1]
		uk, vk := u.Slice(-1, 0, k, 1), vh.Slice(-2, 0, k, 1)
		sv := Mul(s.Unsqueeze(-1), vk)
		return Concat(0, flat(s), flat(MatMul(uk, uk.Transpose(-2, -1))), flat(MatMul(vk.Transpose(-2, -1), sv)))
	}
}
