package tensor_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// The linalg ops against PyTorch 1.13 (testdata/golden/gen_linalg.py):
// outputs gauge-fixed as the generator fixes them, errors by batch
// element and minor, on the CPU, and on every WebGPU adapter through the
// placement policies (WebGPU runs no linalg kernel).

type linalgTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type linalgCase struct {
	Name  string `json:"name"`
	Op    string `json:"op"`
	DType string `json:"dtype"`
	Args  struct {
		Upper bool   `json:"upper"`
		Full  bool   `json:"full"`
		Mode  string `json:"mode"`
	} `json:"args"`
	A          linalgTensor            `json:"a"`
	B          *linalgTensor           `json:"b"`
	TransposeA bool                    `json:"transpose_a"`
	Outputs    map[string]linalgTensor `json:"outputs"`
	Loss       map[string]linalgTensor `json:"loss"`
	Grads      map[string]linalgTensor `json:"grads"`
	Error      *struct {
		Batch   int    `json:"batch"`
		Order   int    `json:"order"`
		Message string `json:"message"`
	} `json:"error"`
}

func loadLinalgGolden(t *testing.T) []linalgCase {
	t.Helper()
	raw, err := os.ReadFile("../testdata/golden/linalg/decomp.json")
	require.NoError(t, err, "run make golden")
	var file struct {
		Torch string       `json:"torch"`
		Cases []linalgCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.True(t, strings.HasPrefix(file.Torch, "1.13"), "golden from PyTorch %s", file.Torch)
	require.NotEmpty(t, file.Cases)
	return file.Cases
}

func (c *linalgCase) dtype() tensor.DType {
	if c.DType == "float32" {
		return tensor.Float32
	}
	return tensor.Float64
}

// linalgUpload makes v on dev in dtype; transposed, it is the transpose
// view of a contiguous tensor holding v's transpose (a strided input).
func linalgUpload(dev *tensor.Device, dt tensor.DType, v linalgTensor, transposed bool) *tensor.Tensor {
	shape, data := v.Shape, v.Data
	if transposed {
		r := len(shape)
		m, n := shape[r-2], shape[r-1]
		shape = append(slices.Clone(shape[:r-2]), n, m)
		data = transposeBatch(v.Data, m, n)
	}
	var x *tensor.Tensor
	if dt == tensor.Float32 {
		f := make([]float32, len(data))
		for i, v := range data {
			f[i] = float32(v) // exact: the golden's inputs are float32 values
		}
		x = tensor.FromFloat32(dev, f, shape...)
	} else {
		x = tensor.FromFloat64(dev, data, shape...)
	}
	if transposed {
		y := x.Transpose(-1, -2)
		x.Release()
		x = y
	}
	return x
}

// transposeBatch transposes each m×n matrix of data.
func transposeBatch(data []float64, m, n int) []float64 {
	out := make([]float64, len(data))
	for b := 0; b < len(data)/max(1, m*n); b++ {
		for i := range m {
			for j := range n {
				out[b*m*n+j*m+i] = data[b*m*n+i*n+j]
			}
		}
	}
	return out
}

// runLinalg runs the case's op on a (and b), returning its outputs by the
// golden's names.
func runLinalg(c *linalgCase, a, b *tensor.Tensor) map[string]*tensor.Tensor {
	switch c.Op {
	case "Solve":
		return map[string]*tensor.Tensor{"x": tensor.Solve(a, b)}
	case "Inv":
		return map[string]*tensor.Tensor{"x": tensor.Inv(a)}
	case "Cholesky":
		return map[string]*tensor.Tensor{"l": tensor.Cholesky(a, c.Args.Upper)}
	case "QR":
		q, r := tensor.QR(a, tensor.QRMode(c.Args.Mode))
		return map[string]*tensor.Tensor{"q": q, "r": r}
	case "SVD":
		u, s, vh := tensor.SVD(a, c.Args.Full)
		return map[string]*tensor.Tensor{"u": u, "s": s, "vh": vh}
	case "SVDVals":
		return map[string]*tensor.Tensor{"s": tensor.SVDVals(a)}
	case "Eigh":
		w, v := tensor.Eigh(a, c.Args.Upper)
		return map[string]*tensor.Tensor{"w": w, "v": v}
	case "EigvalsH":
		return map[string]*tensor.Tensor{"w": tensor.EigvalsH(a, c.Args.Upper)}
	}
	panic("unknown op " + c.Op)
}

// hostMatrices is a read-back batch of matrices.
type hostMatrices struct {
	shape []int
	data  []float64
}

func (h hostMatrices) dims() (batch, rows, cols int) {
	r := len(h.shape)
	rows, cols = h.shape[r-2], h.shape[r-1]
	return len(h.data) / max(1, rows*cols), rows, cols
}

func readHost(t *testing.T, x *tensor.Tensor) hostMatrices {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return hostMatrices{x.Shape(), v}
}

// gaugeFix normalises the outputs' signs as gen_linalg.py does.
func gaugeFix(c *linalgCase, out map[string]hostMatrices) {
	switch c.Op {
	case "QR":
		q, r := out["q"], out["r"]
		nb, m, qc := q.dims()
		_, rr, n := r.dims()
		for b := range nb {
			for j := range qc {
				s := 1.0
				if j < min(rr, n) && r.data[b*rr*n+j*n+j] < 0 {
					s = -1
				}
				for i := range m {
					q.data[b*m*qc+i*qc+j] *= s
				}
				if j < rr {
					for k := range n {
						r.data[b*rr*n+j*n+k] *= s
					}
				}
			}
		}
	case "SVD":
		u, vh, s := out["u"], out["vh"], out["s"]
		k := s.shape[len(s.shape)-1]
		nb, m, uc := u.dims()
		_, vr, n := vh.dims()
		// Compare the first k vectors, as the golden stores them.
		uk := make([]float64, 0, nb*m*k)
		vk := make([]float64, 0, nb*k*n)
		for b := range nb {
			for i := range m {
				uk = append(uk, u.data[b*m*uc+i*uc:b*m*uc+i*uc+k]...)
			}
			vk = append(vk, vh.data[b*vr*n:b*vr*n+k*n]...)
		}
		signs := colSigns(uk, nb, m, k)
		for b := range nb {
			for j := range k {
				sg := signs[b*k+j]
				for i := range m {
					uk[b*m*k+i*k+j] *= sg
				}
				for l := range n {
					vk[b*k*n+j*n+l] *= sg
				}
			}
		}
		out["u"] = hostMatrices{append(slices.Clone(u.shape[:len(u.shape)-1]), k), uk}
		out["vh"] = hostMatrices{append(slices.Clone(vh.shape[:len(vh.shape)-2]), k, n), vk}
	case "Eigh":
		v := out["v"]
		nb, n, _ := v.dims()
		signs := colSigns(v.data, nb, n, n)
		for b := range nb {
			for j := range n {
				for i := range n {
					v.data[b*n*n+i*n+j] *= signs[b*n+j]
				}
			}
		}
	}
}

// colSigns are the signs that make each column's largest-magnitude entry
// positive (the first such on ties, as torch.argmax).
func colSigns(data []float64, nb, m, n int) []float64 {
	out := make([]float64, nb*n)
	for b := range nb {
		for j := range n {
			best := 0
			for i := 1; i < m; i++ {
				if math.Abs(data[b*m*n+i*n+j]) > math.Abs(data[b*m*n+best*n+j]) {
					best = i
				}
			}
			out[b*n+j] = 1
			if data[b*m*n+best*n+j] < 0 {
				out[b*n+j] = -1
			}
		}
	}
	return out
}

// linalgTol is the golden tolerance: float64 results agree with PyTorch's
// to rounding amplified by the (small) condition numbers of the inputs;
// float32 results are the float64 answer rounded once, so they are within
// float32 rounding of the float64 reference, amplified the same way.
func linalgTolerance(dt tensor.DType, want float64) float64 {
	if dt == tensor.Float32 {
		return 2e-5 * (1 + math.Abs(want)) * 8
	}
	return 1e-12 * (1 + math.Abs(want)) * 1e3
}

func checkLinalgGolden(t *testing.T, dev *tensor.Device, c *linalgCase) {
	dt := c.dtype()
	a := linalgUpload(dev, dt, c.A, c.TransposeA)
	var b *tensor.Tensor
	if c.B != nil {
		b = linalgUpload(dev, dt, *c.B, false)
	}
	outs := runLinalg(c, a, b)
	defer func() {
		a.Release()
		b.Release()
		for _, o := range outs {
			o.Release()
		}
	}()
	if c.Error != nil {
		for name, o := range outs {
			err := o.Err()
			require.Error(t, err, "%s: PyTorch fails: %s", name, c.Error.Message)
			var le *hal.LinalgError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, c.Error.Batch, le.Batch, "batch element; PyTorch: %s", c.Error.Message)
			if c.Op == "Cholesky" {
				assert.Equal(t, c.Error.Order, le.Order, "minor; PyTorch: %s", c.Error.Message)
				assert.Contains(t, err.Error(), fmt.Sprintf("the leading minor of order %d is not positive-definite", c.Error.Order))
				assert.ErrorIs(t, err, hal.ErrNotPositiveDefinite)
			} else {
				assert.ErrorIs(t, err, hal.ErrSingular)
			}
			assert.Contains(t, err.Error(), fmt.Sprintf("(Batch element %d)", c.Error.Batch))
			assert.Contains(t, err.Error(), c.Op, "names the op")
			assert.Contains(t, err.Error(), fmt.Sprint(c.A.Shape), "names the shape")
		}
		require.NoError(t, dev.Sync(), "a failed factorization does not poison the device")
		return
	}
	got := map[string]hostMatrices{}
	for name, o := range outs {
		require.Same(t, testdevice.CPU(t), o.Device(), "%s runs on the CPU", name)
		assert.Equal(t, dt, o.DType())
		got[name] = readHost(t, o)
	}
	gaugeFix(c, got)
	for name, want := range c.Outputs {
		g, ok := got[name]
		require.True(t, ok, name)
		require.Equal(t, want.Shape, g.shape, "%s shape", name)
		for i := range want.Data {
			if d := math.Abs(g.data[i] - want.Data[i]); !(d <= linalgTolerance(dt, want.Data[i])) {
				t.Fatalf("%s[%d] = %v, PyTorch %v (diff %.3g)", name, i, g.data[i], want.Data[i], d)
			}
		}
	}
}

func TestLinalgGolden(t *testing.T) {
	cpu := testdevice.CPU(t)
	for _, c := range loadLinalgGolden(t) {
		t.Run(c.Name, func(t *testing.T) { checkLinalgGolden(t, cpu, &c) })
	}
}

// TestLinalgOnWebGPU: WebGPU runs no linalg kernel. Under Explicit (the
// default) an op on a WebGPU tensor panics with an *Error wrapping
// hal.ErrUnsupported that names the op, the shape, the dtype and the
// device; under Auto, ForceGPU and MinimizeTransfers it runs on the CPU
// and matches PyTorch.
func TestLinalgOnWebGPU(t *testing.T) {
	cases := loadLinalgGolden(t)
	testdevice.ForEachWebGPU(t, func(t *testing.T, gpu *tensor.Device) {
		a := tensor.FromFloat32(gpu, []float32{4, 1, 1, 3}, 2, 2)
		defer a.Release()
		for name, run := range map[string]func(){
			"Inv":      func() { tensor.Inv(a) },
			"Cholesky": func() { tensor.Cholesky(a, false) },
			"Solve":    func() { tensor.Solve(a, a) },
			"QR":       func() { tensor.QR(a, tensor.QRReduced) },
			"SVD":      func() { tensor.SVD(a, false) },
			"SVDVals":  func() { tensor.SVDVals(a) },
			"Eigh":     func() { tensor.Eigh(a, false) },
			"EigvalsH": func() { tensor.EigvalsH(a, false) },
		} {
			err := tensor.Catch(run)
			require.Error(t, err, name)
			var te *tensor.Error
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, hal.ErrUnsupported, name)
			assert.Equal(t, name, te.Op)
			for _, part := range []string{"[2 2]", "float32", gpu.Name()} {
				assert.Contains(t, err.Error(), part, "%s: the error names %s", name, part)
			}
			assert.False(t, tensor.Supports(gpu, name, tensor.Float32), "Supports agrees")
		}
		for _, policy := range []tensor.Placement{tensor.Auto, tensor.ForceGPU, tensor.MinimizeTransfers} {
			t.Run(policy.String(), func(t *testing.T) {
				withPlacement(t, policy, gpu)
				for i := range cases {
					c := &cases[i]
					if c.DType != "float32" || c.Error != nil || i%3 != 0 {
						continue // float32 on the GPU; a third of them is plenty
					}
					t.Run(c.Name, func(t *testing.T) { checkLinalgGolden(t, gpu, c) })
				}
				require.Positive(t, tensor.PlacementStats().Ops["cpu"], "the ops were routed to the CPU")
			})
		}
	})
}

// TestLinalgMisuse: bad arguments panic with an *Error naming the op and
// the shapes and dtypes; a failed factorization leaves the device and
// later work alone.
func TestLinalgMisuse(t *testing.T) {
	cpu := testdevice.CPU(t)
	sq := tensor.FromFloat64(cpu, []float64{2, 1, 1, 2}, 2, 2)
	rect := tensor.Zeros(cpu, 2, 3)
	vec := tensor.FromFloat64(cpu, []float64{1, 2, 3})
	half := sq.Cast(tensor.Float16)
	f32 := sq.Cast(tensor.Float32)
	defer releaseAll(sq, rect, vec, half, f32)
	for _, tc := range []struct {
		name string
		run  func()
		want []string
	}{
		{"Inv non-square", func() { tensor.Inv(rect) }, []string{"Inv", "square", "[2 3]"}},
		{"Cholesky vector", func() { tensor.Cholesky(vec, false) }, []string{"Cholesky", "rank ≥ 2", "[3]"}},
		{"Eigh non-square", func() { tensor.Eigh(rect, false) }, []string{"Eigh", "square"}},
		{"Solve dtype", func() { tensor.Solve(sq, f32) }, []string{"Solve", "dtype mismatch", "[2 2] float64", "[2 2] float32"}},
		{"Solve shapes", func() { tensor.Solve(sq, vec) }, []string{"Solve", "[3]", "[2 2]"}},
		{"QR mode", func() { tensor.QR(sq, "r") }, []string{"QR", "mode"}},
		{"SVD float16", func() { tensor.SVD(half, false) }, []string{"SVD", "float16", "cpu"}},
	} {
		err := tensor.Catch(tc.run)
		require.Error(t, err, tc.name)
		for _, part := range tc.want {
			assert.Contains(t, err.Error(), part, tc.name)
		}
	}
	assert.ErrorIs(t, tensor.Catch(func() { tensor.SVD(half, false) }), hal.ErrUnsupported)

	bad := tensor.FromFloat64(cpu, []float64{1, 2, 2, 1}, 2, 2)
	l := tensor.Cholesky(bad, false)
	y := tensor.Add(l, l) // the failure propagates to what is computed from it
	assert.ErrorIs(t, y.Err(), hal.ErrNotPositiveDefinite)
	assert.NoError(t, cpu.Sync(), "the failure is the results', not the device's")
	good := tensor.Cholesky(sq, false)
	v, err := good.Float64s()
	require.NoError(t, err, "later work runs")
	assert.InDelta(t, math.Sqrt2, v[0], 1e-15)
	releaseAll(bad, l, y, good)
}

// TestLinalgEmptyMatrices: matrices with an empty side, in a non-empty
// batch: a complete QR and a full SVD give identities, as PyTorch does.
func TestLinalgEmptyMatrices(t *testing.T) {
	cpu := testdevice.CPU(t)
	a := tensor.Zeros(cpu, 2, 3, 0)
	q, r := tensor.QR(a, tensor.QRComplete)
	u, s, vh := tensor.SVD(a, true)
	defer releaseAll(a, q, r, u, s, vh)
	eye3 := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	for _, x := range []*tensor.Tensor{q, u} {
		require.Equal(t, []int{2, 3, 3}, x.Shape())
		require.Equal(t, append(slices.Clone(eye3), eye3...), readHost(t, x).data)
	}
	require.Equal(t, []int{2, 3, 0}, r.Shape())
	require.Equal(t, []int{2, 0}, s.Shape())
	require.Equal(t, []int{2, 0, 0}, vh.Shape())
}
