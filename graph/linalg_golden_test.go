package graph

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/tensor"
)

// The linalg gradients against PyTorch 1.13's
// (testdata/golden/gen_linalg.py): the gradient of the generator's
// gauge-invariant loss with respect to A (and B), on the CPU in float64
// and float32, and on every WebGPU adapter under the Auto placement (the
// linalg op runs on the CPU, the loss around it on the GPU).

type linalgGoldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type linalgGoldenCase struct {
	Name  string `json:"name"`
	Op    string `json:"op"`
	DType string `json:"dtype"`
	Args  struct {
		Upper bool   `json:"upper"`
		Full  bool   `json:"full"`
		Mode  string `json:"mode"`
	} `json:"args"`
	A          linalgGoldenTensor            `json:"a"`
	B          *linalgGoldenTensor           `json:"b"`
	TransposeA bool                          `json:"transpose_a"`
	Loss       map[string]linalgGoldenTensor `json:"loss"`
	Grads      map[string]linalgGoldenTensor `json:"grads"`
}

func loadLinalgGradGolden(t *testing.T) []linalgGoldenCase {
	raw, err := os.ReadFile("../testdata/golden/linalg/decomp.json")
	require.NoError(t, err)
	var file struct {
		Cases []linalgGoldenCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	var out []linalgGoldenCase
	for _, c := range file.Cases {
		if c.Grads != nil {
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func (c *linalgGoldenCase) dtype() tensor.DType {
	if c.DType == "float32" {
		return tensor.Float32
	}
	return tensor.Float64
}

// upload makes v on dev; transposed, as the transpose view of its
// transpose (a non-contiguous operand).
func (c *linalgGoldenCase) upload(dev *tensor.Device, v linalgGoldenTensor, transposed bool) *tensor.Tensor {
	shape, data := v.Shape, v.Data
	if transposed {
		r := len(shape)
		m, n := shape[r-2], shape[r-1]
		shape = append(slices.Clone(shape[:r-2]), n, m)
		data = make([]float64, len(v.Data))
		for b := 0; b < len(data)/max(1, m*n); b++ {
			for i := range m {
				for j := range n {
					data[b*m*n+j*m+i] = v.Data[b*m*n+i*n+j]
				}
			}
		}
	}
	var x *tensor.Tensor
	if c.dtype() == tensor.Float32 {
		f := make([]float32, len(data))
		for i, d := range data {
			f[i] = float32(d)
		}
		x = tensor.FromFloat32(dev, f, shape...)
	} else {
		x = tensor.FromFloat64(dev, data, shape...)
	}
	if !transposed {
		return x
	}
	defer x.Release()
	return x.Transpose(-1, -2)
}

// loss builds the generator's loss for the case.
func (c *linalgGoldenCase) loss(t *testing.T, dev *tensor.Device, a, b *Value) *Value {
	w := func(name string) *Value { return Constant(c.upload(dev, c.Loss[name], false)) }
	dot := func(x, y *Value) *Value { return Mul(x, y).Sum(nil, false) }
	switch c.Op {
	case "Solve":
		return dot(w("G"), Solve(a, b))
	case "Inv":
		return dot(w("G"), Inv(a))
	case "Cholesky":
		return dot(w("G"), Cholesky(a, c.Args.Upper))
	case "QR":
		q, r := QR(a, tensor.QRMode(c.Args.Mode))
		// D = sign(diag R), held constant, as the generator holds it.
		rv, err := r.Float64s()
		require.NoError(t, err)
		rs := r.Shape()
		rows, cols := rs[len(rs)-2], rs[len(rs)-1]
		batch := len(rv) / max(1, rows*cols)
		d := make([]float64, batch*rows)
		for bi := range batch {
			for i := range rows {
				d[bi*rows+i] = 1
				if i < cols && rv[bi*rows*cols+i*cols+i] < 0 {
					d[bi*rows+i] = -1
				}
			}
		}
		dv := Constant(c.upload(dev, linalgGoldenTensor{append(slices.Clone(rs[:len(rs)-2]), rows), d}, false))
		return Add(dot(w("G1"), Mul(q, dv.Unsqueeze(-2))), dot(w("G2"), Mul(r, dv.Unsqueeze(-1))))
	case "SVD":
		u, s, vh := SVD(a, c.Args.Full)
		k := s.Shape()[len(s.Shape())-1]
		uk, vk := u.Slice(-1, 0, k, 1), vh.Slice(-2, 0, k, 1)
		return Add(Add(dot(w("g"), s), dot(w("G1"), MatMul(uk, mT(uk)))), dot(w("G2"), MatMul(mT(vk), Mul(s.Unsqueeze(-1), vk))))
	case "SVDVals":
		return dot(w("g"), SVDVals(a))
	case "Eigh":
		ww, v := Eigh(a, c.Args.Upper)
		n := ww.Shape()[len(ww.Shape())-1]
		cs := make([]float64, n)
		for i := range cs {
			cs[i] = float64(i + 1)
		}
		cv := Constant(c.upload(dev, linalgGoldenTensor{[]int{n}, cs}, false))
		return Add(dot(w("g"), ww), dot(w("G"), MatMul(Mul(v, cv), mT(v))))
	case "EigvalsH":
		return dot(w("g"), EigvalsH(a, c.Args.Upper))
	}
	t.Fatalf("unknown op %s", c.Op)
	return nil
}

func checkLinalgGradGolden(t *testing.T, dev *tensor.Device, c *linalgGoldenCase) {
	a := Param(c.upload(dev, c.A, c.TransposeA))
	var b *Value
	if c.B != nil {
		b = Param(c.upload(dev, *c.B, false))
	}
	loss := c.loss(t, dev, a, b)
	require.NoError(t, loss.Backward())
	tol := 1e-9
	if c.dtype() == tensor.Float32 {
		tol = 2e-3
	}
	for name, want := range c.Grads {
		x := a
		if name == "b" {
			x = b
		}
		got, err := x.Grad().Float64s()
		require.NoError(t, err, name)
		require.Equal(t, want.Shape, x.Grad().Shape(), name)
		scale := 0.0
		for _, v := range want.Data {
			scale = max(scale, math.Abs(v))
		}
		for i := range want.Data {
			if d := math.Abs(got[i] - want.Data[i]); !(d <= tol*(1+scale)) {
				t.Fatalf("grad %s[%d] = %v, PyTorch %v (diff %.3g, tol %.3g)", name, i, got[i], want.Data[i], d, tol*(1+scale))
			}
		}
	}
}

func TestLinalgGradGolden(t *testing.T) {
	cpu := cpuDevice(t)
	for _, c := range loadLinalgGradGolden(t) {
		t.Run(c.Name, func(t *testing.T) { checkLinalgGradGolden(t, cpu, &c) })
	}
}

func TestLinalgGradGoldenOnWebGPU(t *testing.T) {
	cases := loadLinalgGradGolden(t)
	forEachWebGPU(t, func(t *testing.T, gpu *tensor.Device) {
		prev, prevGPU := tensor.SetPlacement(tensor.Auto), tensor.SetPlacementGPU(gpu)
		// Every size reaches the GPU: host data and the loss's ops go
		// there, the linalg ops alone to the CPU.
		tensor.SetThresholds(tensor.Thresholds{Elementwise: 1, Reduction: 1, MatMul: 1, Window: 1, Creation: 1})
		defer func() { tensor.SetPlacement(prev); tensor.SetPlacementGPU(prevGPU); tensor.ResetThresholds() }()
		tensor.ResetPlacementStats()
		for i := range cases {
			c := &cases[i]
			if c.DType != "float32" || i%2 != 0 {
				continue // float32 on the GPU; half of them is plenty
			}
			t.Run(c.Name, func(t *testing.T) { checkLinalgGradGolden(t, gpu, c) })
		}
		ops := tensor.PlacementStats().Ops
		require.Positive(t, ops[gpu.Name()], "the loss ran on the GPU")
		require.Positive(t, ops["cpu"], "the linalg ops ran on the CPU")
	})
}

// TestLinalgGradRefusals: where PyTorch has no gradient (a complete QR of
// a tall matrix), Backward fails naming the op and the shape.
func TestLinalgGradRefusals(t *testing.T) {
	cpu := cpuDevice(t)
	for _, tc := range []struct {
		shape []int
		mode  tensor.QRMode
		want  string
	}{{[]int{5, 3}, tensor.QRComplete, "complete and m > n"}} {
		a := Param(tensor.Ones(cpu, tc.shape...).Cast(tensor.Float64))
		q, r := QR(a, tc.mode)
		err := Add(q.Sum(nil, false), r.Sum(nil, false)).Backward()
		require.Error(t, err)
		require.Contains(t, err.Error(), "QR")
		require.Contains(t, err.Error(), tc.want)
		require.Contains(t, err.Error(), fmt.Sprintf("%d×%d", tc.shape[0], tc.shape[1]))
	}
}
