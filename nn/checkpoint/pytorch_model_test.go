package checkpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/tensor"
)

// The model, its safetensors file and PyTorch's outputs come from
// testdata/golden/gen_int64.py (PyTorch 1.13), which trains the model a
// few steps so that the running statistics and num_batches_tracked (an I64
// scalar) are not their initial values.

type int64Golden struct {
	File   string `json:"file"`
	Config struct {
		Vocab, Dim, Hidden, Cin, Cout int
	} `json:"config"`
	State             []string `json:"state"`
	NumBatchesTracked int64    `json:"num_batches_tracked"`
	Eval              struct {
		IDs      []int64   `json:"ids"`
		IDsShape []int     `json:"ids_shape"`
		Img      []float64 `json:"img"`
		ImgShape []int     `json:"img_shape"`
		H        []float64 `json:"h"`
		C        []float64 `json:"c"`
	} `json:"eval"`
	Train struct {
		IDs               []int64              `json:"ids"`
		IDsShape          []int                `json:"ids_shape"`
		Img               []float64            `json:"img"`
		ImgShape          []int                `json:"img_shape"`
		H                 []float64            `json:"h"`
		C                 []float64            `json:"c"`
		NumBatchesTracked int64                `json:"num_batches_tracked"`
		Running           map[string][]float64 `json:"running"`
	} `json:"train"`
	DTypes struct {
		File        string   `json:"file"`
		I64         []int64  `json:"i64"`
		Small       []int64  `json:"small"`
		BF16Shape   []int    `json:"bf16_shape"`
		BF16F32Bits []uint32 `json:"bf16_f32_bits"`
	} `json:"dtypes"`
}

func loadInt64Golden(t *testing.T) int64Golden {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(goldenDir, "int64.json"))
	require.NoError(t, err)
	var g int64Golden
	require.NoError(t, json.Unmarshal(js, &g))
	return g
}

// torchNet is gen_int64.py's Net, written with nn.Base.
type torchNet struct {
	nn.Base
	Emb            *nn.Embedding
	FC             *nn.Linear
	BN, BNAvg, BN2 *nn.BatchNorm
	Conv           *nn.Conv2d
}

func newTorchNet(dev *tensor.Device, g int64Golden) *torchNet {
	c := g.Config
	gen := tensor.NewGenerator(1)
	m := &torchNet{}
	m.Emb = nn.Add(m, "emb", nn.NewEmbedding(dev, c.Vocab, c.Dim, gen))
	m.FC = nn.Add(m, "fc", nn.NewLinear(dev, c.Dim, c.Hidden, true, gen))
	m.BN = nn.Add(m, "bn", nn.NewBatchNorm1d(dev, c.Hidden))
	m.BNAvg = nn.Add(m, "bn_avg", nn.NewBatchNorm1d(dev, c.Hidden))
	m.BNAvg.Momentum = nil // momentum=None
	m.Conv = nn.Add(m, "conv", nn.NewConv2d(dev, c.Cin, c.Cout, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen))
	m.BN2 = nn.Add(m, "bn2", nn.NewBatchNorm2d(dev, c.Cout))
	return m
}

// Forward is the image-less half, to satisfy nn.Module; Forward2 is the
// model's.
func (m *torchNet) Forward(ids *graph.Value) *graph.Value {
	e := m.Emb.Forward(ids)
	defer e.Release()
	mean := e.Mean([]int{1}, false)
	defer mean.Release()
	fc := m.FC.Forward(mean)
	defer fc.Release()
	bn := m.BN.Forward(fc)
	defer bn.Release()
	r := bn.ReLU()
	defer r.Release()
	return m.BNAvg.Forward(r)
}

func (m *torchNet) Forward2(ids, img *graph.Value) (h, c *graph.Value) {
	conv := m.Conv.Forward(img)
	defer conv.Release()
	return m.Forward(ids), m.BN2.Forward(conv)
}

func float32sOf(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// nearAll compares got with PyTorch's float32 results within tol, relative
// to the results' scale.
func nearAll(t *testing.T, what string, want, got []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %v, PyTorch %v (|diff| %.3g)", what, i, got[i], want[i], d)
			return
		}
	}
}

// TestPyTorchModelLoadsStrictly is the acceptance test of Int64
// checkpoints: PyTorch's file loads into the same architecture with no
// missing or unexpected name (num_batches_tracked included, Int32 on a
// WebGPU device), reproduces PyTorch's eval outputs, counts and averages
// one more training batch as PyTorch (momentum=None included), and
// round-trips through Save and Load.
func TestPyTorchModelLoadsStrictly(t *testing.T) {
	g := loadInt64Golden(t)
	path := filepath.Join(goldenDir, g.File)
	forEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		m := newTorchNet(dev, g)
		defer nn.Release(m)
		assert.ElementsMatch(t, g.State, keys(nn.StateDict(m)), "the same state names as PyTorch")
		require.NoError(t, Load(path, m, nil))

		counterType := tensor.Int64
		if !tensor.HoldsInt64(dev) {
			counterType = tensor.Int32
		}
		for _, bn := range []*nn.BatchNorm{m.BN, m.BNAvg, m.BN2} {
			require.Equal(t, counterType, bn.NumBatchesTracked.DType())
			n, err := bn.NumBatchesTracked.Tensor().Int64s()
			require.NoError(t, err)
			assert.Equal(t, []int64{g.NumBatchesTracked}, n)
		}

		tol := 2e-5
		if dev.Name() != "cpu" {
			tol = 2e-4
		}
		run := func(ids []int64, idsShape []int, img []float64, imgShape []int) ([]float64, []float64) {
			x := graph.Constant(tensor.FromInt64(dev, ids, idsShape...))
			y := graph.Constant(tensor.FromFloat32(dev, float32sOf(img), imgShape...))
			defer x.Release()
			defer y.Release()
			h, c := m.Forward2(x, y)
			defer h.Release()
			defer c.Release()
			return float64sOf(t, h.Tensor()), float64sOf(t, c.Tensor())
		}
		m.SetTraining(false)
		h, c := run(g.Eval.IDs, g.Eval.IDsShape, g.Eval.Img, g.Eval.ImgShape)
		nearAll(t, "eval h", g.Eval.H, h, tol)
		nearAll(t, "eval c", g.Eval.C, c, tol)

		// One more training batch, as the script ran it.
		m.SetTraining(true)
		h, c = run(g.Train.IDs, g.Train.IDsShape, g.Train.Img, g.Train.ImgShape)
		nearAll(t, "train h", g.Train.H, h, tol*10)
		nearAll(t, "train c", g.Train.C, c, tol*10)
		state := nn.StateDict(m)
		for name, want := range g.Train.Running {
			nearAll(t, name, want, float64sOf(t, state[name]), tol)
		}
		n, err := m.BNAvg.NumBatchesTracked.Tensor().Int64s()
		require.NoError(t, err)
		assert.Equal(t, []int64{g.Train.NumBatchesTracked}, n)

		// Save and load into a fresh model on the CPU: the counter comes
		// back (I64 from the CPU, I32 from WebGPU), as every value.
		saved := filepath.Join(t.TempDir(), "model.safetensors")
		require.NoError(t, Save(saved, m, nil))
		back := newTorchNet(cpuDevice(t), g)
		defer nn.Release(back)
		require.NoError(t, Load(saved, back, nil))
		got := nn.StateDict(back)
		for name, want := range state {
			if want.DType().IsInteger() {
				w, err := want.Int64s()
				require.NoError(t, err)
				v, err := got[name].Int64s()
				require.NoError(t, err)
				assert.Equal(t, w, v, name)
				continue
			}
			assert.Equal(t, float64sOf(t, want), float64sOf(t, got[name]), name)
		}
	})
}

// TestReadInt64AndBF16: PyTorch's I64 extremes read exactly on the CPU and
// narrow on WebGPU (the out-of-range ones are an error naming the tensor);
// BF16 reads as Float32, bit for bit as torch widens it.
func TestReadInt64AndBF16(t *testing.T) {
	g := loadInt64Golden(t).DTypes
	path := filepath.Join(goldenDir, g.File)
	tensors, _, err := ReadFile(path, cpuDevice(t))
	require.NoError(t, err)
	defer releaseAll(tensors)
	require.Equal(t, tensor.Int64, tensors["i64"].DType())
	i64, err := tensors["i64"].Int64s()
	require.NoError(t, err)
	assert.Equal(t, g.I64, i64)
	bf := tensors["bf16"]
	require.Equal(t, tensor.Float32, bf.DType())
	require.Equal(t, g.BF16Shape, bf.Shape())
	f32, err := bf.Float32s()
	require.NoError(t, err)
	bits := make([]uint32, len(f32))
	for i, x := range f32 {
		bits[i] = math.Float32bits(x)
	}
	assert.Equal(t, g.BF16F32Bits, bits)

	forEachWebGPU(t, func(t *testing.T, dev *tensor.Device) {
		_, _, err := ReadFile(path, dev)
		require.ErrorIs(t, err, tensor.ErrInt64Overflow)
		assert.Contains(t, err.Error(), `tensor "i64"`)
		assert.Contains(t, err.Error(), "-9223372036854775808")
	})
}

func float64sOf(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// TestWriteMatchesPyTorchFile: the PyTorch-written model file, read and
// written again (I64 counters included), comes back byte for byte.
func TestWriteMatchesPyTorchFile(t *testing.T) {
	g := loadInt64Golden(t)
	file, err := os.ReadFile(filepath.Join(goldenDir, g.File))
	require.NoError(t, err)
	tensors, meta, err := Read(bytes.NewReader(file), cpuDevice(t))
	require.NoError(t, err)
	defer releaseAll(tensors)
	require.Empty(t, meta)
	require.Equal(t, tensor.Int64, tensors["bn.num_batches_tracked"].DType())
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, tensors, nil))
	require.Equal(t, file, buf.Bytes())
}
