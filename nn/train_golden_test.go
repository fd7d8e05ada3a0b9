package nn_test

// Training trajectories against PyTorch: testdata/golden/nn/train.json
// holds, for an MLP and a small CNN, the initial weights (state-dict
// names), a 64-sample data set, the 20 batches a seeded shuffle draws from
// it, and PyTorch's loss at each of 20 steps and parameters after them,
// with SGD (momentum) and with Adam. It is written by
// testdata/golden/gen_train.py (Debian's python3-torch). Here the same
// models, built from this package's layers and trained with nn/optim,
// must follow that trajectory on every device:
//
//	go test ./nn -run 'TestTrainGolden/cpu/cnn/adam' -v

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/optim"
	"github.com/webtensor/webtensor/tensor"
)

const trainGoldenPath = "../testdata/golden/nn/train.json"

// Float32 tolerance, against PyTorch's float64 run of the same training
// (the answer to the float32 problem without float32's rounding):
//
//	loss at step k (0-based): |Δ| ≤ 1e-4·(1 + k/20)·(1 + |loss|)
//	final parameters:         |Δ| ≤ 1e-4·max|want| + 1e-6, per tensor
//
// Each step's forward pass sums at most 64 products per output through
// three layers, exp and log, so one step in float32 is off by ~1e-7 of
// the loss; the trajectory then carries every step's rounding into the
// next step's weights, which is why the bound grows with k. PyTorch's own
// float32 run stays within 2e-7·(1 + |loss|) of the float64 losses (1e-3
// of this bound) and within 3e-7 of each final tensor's largest element
// (3e-3 of the bound), with no visible growth over 20 steps. That leaves a
// factor of several hundred for other summation orders (tiled GPU
// matmuls, im2col convolutions, another order of the batch mean) and the
// GPU's few-ulp exp and log (measured: the CPU backend uses at most 6e-3
// of either bound, WebGPU on llvmpipe 1e-2), and is still tight enough
// that a learning rate or momentum 1% off fails by step 1 to 4; a wrong
// gradient rule, optimizer rule or layer is off by far more.
// gen_train.py checks that PyTorch's float32 run uses under a tenth of
// these bounds; keep the two in step.
const (
	trainLossRTol  = 1e-4
	trainParamRTol = 1e-4
	trainParamATol = 1e-6
)

type trainGoldenFile struct {
	Torch  string             `json:"torch"`
	Steps  int                `json:"steps"`
	Batch  int                `json:"batch"`
	Models []trainGoldenModel `json:"models"`
}

type trainGoldenModel struct {
	Name    string                       `json:"name"`
	Arch    string                       `json:"arch"`
	Init    map[string]trainGoldenTensor `json:"init"`
	X       trainGoldenTensor            `json:"x"`
	Y       []int32                      `json:"y"`
	Batches [][]int                      `json:"batches"`
	Runs    []trainGoldenRun             `json:"runs"`
}

type trainGoldenRun struct {
	Optimizer string `json:"optimizer"`
	Config    struct {
		LR       float64   `json:"lr"`
		Momentum float64   `json:"momentum"`
		Betas    []float64 `json:"betas"`
		Eps      float64   `json:"eps"`
	} `json:"config"`
	Loss        []float64                    `json:"loss"`
	LossFloat32 []float64                    `json:"loss_float32"`
	Final       map[string]trainGoldenTensor `json:"final"`
}

// trainGoldenTensor is float32 data, written as the shortest decimal that
// encoding/json parses back to the same float32.
type trainGoldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float32 `json:"data"`
}

// trainGoldenArch maps each model of the file to its construction here,
// with PyTorch's description of the model it must match.
var trainGoldenArch = map[string]struct {
	torch string
	build func(dev *tensor.Device) nn.Module
}{
	"mlp": {
		"Sequential( (0): Linear(in_features=20, out_features=32, bias=True) (1): ReLU() " +
			"(2): Linear(in_features=32, out_features=16, bias=True) (3): ReLU() " +
			"(4): Linear(in_features=16, out_features=5, bias=True) )",
		func(dev *tensor.Device) nn.Module {
			gen := tensor.NewGenerator(1) // the golden weights replace these
			return nn.NewSequential(
				nn.NewLinear(dev, 20, 32, true, gen), nn.ReLU{},
				nn.NewLinear(dev, 32, 16, true, gen), nn.ReLU{},
				nn.NewLinear(dev, 16, 5, true, gen))
		},
	},
	"cnn": {
		"Sequential( (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)) (1): ReLU() " +
			"(2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False) " +
			"(3): Flatten(start_dim=1, end_dim=-1) (4): Linear(in_features=64, out_features=5, bias=True) )",
		func(dev *tensor.Device) nn.Module {
			gen := tensor.NewGenerator(1)
			return nn.NewSequential(
				nn.NewConv2d(dev, 1, 4, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
				nn.ReLU{},
				nn.NewMaxPool2d(tensor.PoolOptions{Kernel: [2]int{2, 2}}),
				nn.NewFlatten(),
				nn.NewLinear(dev, 4*4*4, 5, true, gen))
		},
	},
}

func loadTrainGolden(t *testing.T) *trainGoldenFile {
	t.Helper()
	raw, err := os.ReadFile(trainGoldenPath)
	require.NoError(t, err, "golden data: run /usr/bin/python3 testdata/golden/gen_train.py")
	var f trainGoldenFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Models)
	return &f
}

func TestTrainGolden(t *testing.T) {
	f := loadTrainGolden(t)
	trainForEachDevice(t, func(t *testing.T, dev *tensor.Device) {
		for _, m := range f.Models {
			arch, ok := trainGoldenArch[m.Name]
			require.True(t, ok, "no Go model for golden model %q", m.Name)
			require.Equal(t, arch.torch, m.Arch, "golden model %q changed: update trainGoldenArch", m.Name)
			for _, r := range m.Runs {
				t.Run(m.Name+"/"+r.Optimizer, func(t *testing.T) {
					require.Len(t, m.Batches, f.Steps)
					require.Len(t, r.Loss, f.Steps)
					trainGoldenRunOn(t, dev, &m, &r, arch.build)
				})
			}
		}
	})
}

func trainGoldenRunOn(t *testing.T, dev *tensor.Device, m *trainGoldenModel, r *trainGoldenRun, build func(*tensor.Device) nn.Module) {
	// The run counts dev's live bytes: no cleanup of an earlier test's
	// tensor may free any in between.
	testdevice.QuietGC(t, dev)
	model := build(dev)
	defer nn.Release(model)
	init := make(map[string]*tensor.Tensor, len(m.Init))
	for name, w := range m.Init {
		init[name] = tensor.FromFloat32(dev, w.Data, w.Shape...)
	}
	err := nn.LoadStateDict(model, init)
	for _, w := range init {
		w.Release() // LoadStateDict copies
	}
	require.NoError(t, err)

	var opt optim.Optimizer
	switch r.Optimizer {
	case "sgd":
		opt = optim.NewSGD(model.Parameters(), optim.SGDConfig{LR: r.Config.LR, Momentum: r.Config.Momentum})
	case "adam":
		require.Len(t, r.Config.Betas, 2)
		opt = optim.NewAdam(model.Parameters(), optim.AdamConfig{
			LR: r.Config.LR, Beta1: new(r.Config.Betas[0]), Beta2: new(r.Config.Betas[1]), Eps: new(r.Config.Eps)})
	default:
		t.Fatalf("unknown optimizer %q", r.Optimizer)
	}
	if rel, ok := opt.(interface{ Release() }); ok {
		defer rel.Release()
	}

	sample := 1
	for _, d := range m.X.Shape[1:] {
		sample *= d
	}
	var live int64
	worstLoss, worstLossAbs, worstLossTorch32 := 0.0, 0.0, 0.0
	for k, idx := range m.Batches {
		xs := make([]float32, 0, len(idx)*sample)
		ys := make([]int32, 0, len(idx))
		for _, i := range idx {
			xs = append(xs, m.X.Data[i*sample:(i+1)*sample]...)
			ys = append(ys, m.Y[i])
		}
		x := graph.Constant(tensor.FromFloat32(dev, xs, append([]int{len(idx)}, m.X.Shape[1:]...)...))
		y := graph.Constant(tensor.FromInt32(dev, ys, len(idx)))
		logits := model.Forward(x)
		x.Release()
		loss := nn.CrossEntropy(logits, y, 0)
		logits.Release()
		y.Release()
		require.NoError(t, graph.Backward(loss))
		require.NoError(t, opt.Step())
		opt.ZeroGrad()
		got, err := loss.Tensor().Item()
		require.NoError(t, err)
		loss.Release()

		want := r.Loss[k]
		tol := trainLossRTol * (1 + float64(k)/float64(len(m.Batches))) * (1 + math.Abs(want))
		d := math.Abs(got - want)
		require.LessOrEqual(t, d, tol, "step %d: loss %.9g, PyTorch %.9g", k, got, want)
		worstLoss = max(worstLoss, d/tol)
		worstLossAbs = max(worstLossAbs, d)
		if len(r.LossFloat32) == len(r.Loss) {
			worstLossTorch32 = max(worstLossTorch32, math.Abs(got-r.LossFloat32[k]))
		}

		// The optimizer's state exists from the first step on; after
		// that, a step that leaves more device memory behind leaks.
		if k == 0 {
			require.NoError(t, dev.Sync())
			live = dev.Stats().LiveBytes
		}
	}
	require.NoError(t, dev.Sync())
	require.Equal(t, live, dev.Stats().LiveBytes, "training steps leak device memory")

	worstParam, worstParamAbs := 0.0, 0.0
	state := nn.StateDict(model)
	require.Len(t, state, len(r.Final))
	for name, want := range r.Final {
		p, ok := state[name]
		require.True(t, ok, "no parameter %q", name)
		require.Equal(t, want.Shape, p.Shape(), name)
		got, err := p.Float32s()
		require.NoError(t, err)
		scale := 0.0
		for _, w := range want.Data {
			scale = max(scale, math.Abs(float64(w)))
		}
		tol := trainParamRTol*scale + trainParamATol
		for i, w := range want.Data {
			d := math.Abs(float64(got[i]) - float64(w))
			if d > tol {
				t.Fatalf("%s[%d] after %d steps: %.9g, PyTorch %.9g (|Δ| %.3g > %.3g)", name, i, len(m.Batches), got[i], w, d, tol)
			}
			worstParam = max(worstParam, d/tol)
			worstParamAbs = max(worstParamAbs, d)
		}
	}
	t.Logf("loss %.4f → %.4f; worst |Δloss| %.3g (%.2g of tolerance; %.3g from PyTorch's float32 run), worst |Δparam| %.3g (%.2g of tolerance)",
		r.Loss[0], r.Loss[len(r.Loss)-1], worstLossAbs, worstLoss, worstLossTorch32, worstParamAbs, worstParam)
}

func trainCI() bool { return os.Getenv("CI") == "true" }

// trainDevice opens a device by name; WebGPU is skipped when there is
// none, except under CI=true, where it is required.
func trainDevice(t testing.TB, name string) *tensor.Device {
	t.Helper()
	dev, err := tensor.Open(name)
	if err != nil {
		if strings.HasPrefix(name, "webgpu") && !trainCI() {
			t.Skipf("no WebGPU device: %v", err)
		}
		t.Fatalf("open %s: %v", name, err)
	}
	return dev
}

// trainForEachDevice runs f as a subtest on the CPU and on each WebGPU
// adapter.
var trainForEachDevice = testdevice.ForEach
