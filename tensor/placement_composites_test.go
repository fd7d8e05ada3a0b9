package tensor_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// eachWebGPU runs f as a subtest on every WebGPU adapter that
// tensor.Adapters lists, opened by index. Without one it skips, except
// under CI=true.
func eachWebGPU(t *testing.T, f func(t *testing.T, gpu *tensor.Device)) {
	var names []string
	for _, a := range tensor.Adapters() {
		if strings.HasPrefix(a.Name, "webgpu:") {
			names = append(names, a.Name)
		}
	}
	if len(names) == 0 {
		if testdevice.CI() {
			t.Fatalf("CI=true requires a WebGPU adapter: %v", tensor.BackendErrors())
		}
		t.Skip("no WebGPU adapter")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			gpu, err := tensor.Open(name)
			require.NoError(t, err)
			f(t, gpu)
		})
	}
}

// operand is one input of a composite op: its shape, and whether its
// values must be positive (a variance).
type operand struct {
	shape    []int
	positive bool
}

// compositeCase is a public op that runs several kernels. family is the
// threshold family its entry places it by.
type compositeCase struct {
	name     string
	family   string
	operands []operand
	run      func(in []*tensor.Tensor) *tensor.Tensor
}

func shape(dims ...int) operand    { return operand{shape: dims} }
func positive(dims ...int) operand { return operand{shape: dims, positive: true} }

var compositeCases = []compositeCase{
	{"Conv3d", "matmul", []operand{shape(2, 4, 5, 4, 3), shape(6, 2, 3, 2, 2), shape(6)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.Conv3d(in[0], in[1], in[2], tensor.Conv3dOptions{Padding: [3]int{1, 1, 0}, Groups: 2})
	}},
	{"Conv2d", "matmul", []operand{shape(2, 3, 6, 6), shape(4, 3, 3, 3), shape(4)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.Conv2d(in[0], in[1], in[2], tensor.ConvOptions{Padding: [2]int{1, 1}})
	}},
	{"ConvTranspose2d", "matmul", []operand{shape(2, 3, 4, 4), shape(3, 2, 3, 3), shape(2)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.ConvTranspose2d(in[0], in[1], in[2], tensor.ConvTransposeOptions{Stride: [2]int{2, 2}})
	}},
	{"MaxPool2d", "window", []operand{shape(2, 3, 6, 6)}, func(in []*tensor.Tensor) *tensor.Tensor {
		values, indices := tensor.MaxPool2d(in[0], tensor.PoolOptions{Kernel: [2]int{2, 2}})
		defer indices.Release()
		if indices.Device() != values.Device() {
			panic("MaxPool2d's indices and values on different devices")
		}
		return values
	}},
	{"AvgPool2d", "window", []operand{shape(2, 3, 6, 6)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.AvgPool2d(in[0], tensor.PoolOptions{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}}, false)
	}},
	{"AdaptiveAvgPool2d/global", "window", []operand{shape(2, 3, 6, 6)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.AdaptiveAvgPool2d(in[0], 1, 1)
	}},
	{"AdaptiveAvgPool2d/3x3", "window", []operand{shape(2, 3, 6, 6)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.AdaptiveAvgPool2d(in[0], 3, 3)
	}},
	{"BatchNorm/eval", "reduction", []operand{shape(4, 3, 5), shape(3), positive(3), shape(3), shape(3)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.BatchNorm(in[0], in[1], in[2], in[3], in[4], false, 0.1, 1e-5)
	}},
	{"BatchNorm/batch-statistics", "reduction", []operand{shape(4, 3, 5), shape(3), shape(3)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.BatchNorm(in[0], nil, nil, in[1], in[2], true, 0.1, 1e-5)
	}},
	{"LayerNorm", "reduction", []operand{shape(4, 10), shape(10), shape(10)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.LayerNorm(in[0], []int{10}, in[1], in[2], 1e-5)
	}},
	{"Softmax", "reduction", []operand{shape(5, 7)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.Softmax(in[0], 1)
	}},
	{"LogSoftmax", "reduction", []operand{shape(5, 7)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.LogSoftmax(in[0], 0)
	}},
	{"Mean", "reduction", []operand{shape(6, 9)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return in[0].Mean([]int{1}, false)
	}},
	{"Var", "reduction", []operand{shape(6, 9)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return in[0].Var([]int{0}, 1, true)
	}},
	{"Std", "reduction", []operand{shape(6, 9)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return in[0].Std(nil, 0, false)
	}},
	{"RBFKernel", "matmul", []operand{shape(6, 4), shape(5, 4)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.RBFKernel(in[0], in[1], 0.3)
	}},
	{"AffineGrid", "matmul", []operand{shape(2, 2, 3)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.AffineGrid(in[0], []int{2, 1, 4, 5}, false)
	}},
	{"GridSample", "window", []operand{shape(2, 3, 5, 5), shape(2, 4, 4, 2)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.GridSample(in[0], in[1], tensor.GridZeros, false)
	}},
	{"Dropout", "elementwise", []operand{shape(4, 50)}, func(in []*tensor.Tensor) *tensor.Tensor {
		// The same seed draws the same mask on every device.
		return tensor.Dropout(in[0], 0.3, true, tensor.NewGenerator(7))
	}},
}

// onlyFamily returns thresholds under which an op of family fam runs on
// the accelerator when win, while every other family does the opposite:
// an op whose inner steps were placed on their own would then split.
func onlyFamily(fam string, win bool) tensor.Thresholds {
	yes, no := int64(0), tensor.Never
	if !win {
		yes, no = no, yes
	}
	th := tensor.Thresholds{Elementwise: no, Reduction: no, MatMul: no, Window: no, Creation: tensor.Never}
	switch fam {
	case "elementwise":
		th.Elementwise = yes
	case "reduction":
		th.Reduction = yes
	case "matmul":
		th.MatMul = yes
	case "window":
		th.Window = yes
	default:
		panic("unknown family " + fam)
	}
	return th
}

// TestPlacementCompositesWhole: every composite op is placed once, at its
// entry, by its own family's threshold, and runs whole on that device:
// PlacementStats counts one op, on the device the result is on, and the
// values match the op on the CPU under Explicit.
func TestPlacementCompositesWhole(t *testing.T) {
	cpu := testdevice.CPU(t)
	eachWebGPU(t, func(t *testing.T, gpu *tensor.Device) {
		for _, tc := range compositeCases {
			t.Run(tc.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(tc.name)), 21))
				data := make([][]float32, len(tc.operands))
				for i, o := range tc.operands {
					data[i] = randFloats(r, product(o.shape))
					if o.positive {
						for j, v := range data[i] {
							data[i][j] = 0.5 + v*v
						}
					}
				}
				// on puts operand i on devs[i] (the last device repeats).
				on := func(devs ...*tensor.Device) []*tensor.Tensor {
					in := make([]*tensor.Tensor, len(data))
					for i, o := range tc.operands {
						in[i] = hostTensor(t, devs[min(i, len(devs)-1)], data[i], o.shape...)
					}
					return in
				}
				withPlacement(t, tensor.Explicit, gpu)
				ref := tc.run(on(cpu))
				want := testdevice.Float64s(t, ref)
				ref.Release()

				for _, sc := range []struct {
					name      string
					policy    tensor.Placement
					th        tensor.Thresholds
					devs      []*tensor.Device
					want      *tensor.Device // nil: either
					wantMoves int
				}{
					{"auto/cpu-below-own-threshold", tensor.Auto, onlyFamily(tc.family, false), []*tensor.Device{cpu}, cpu, 0},
					{"auto/cpu-above-own-threshold", tensor.Auto, onlyFamily(tc.family, true), []*tensor.Device{cpu}, gpu, len(data)},
					{"auto/gpu-stays", tensor.Auto, onlyFamily(tc.family, false), []*tensor.Device{gpu}, gpu, 0},
					{"auto/mixed", tensor.Auto, tensor.NeverThresholds, []*tensor.Device{cpu, gpu}, nil, -1},
					{"force-gpu", tensor.ForceGPU, tensor.NeverThresholds, []*tensor.Device{cpu}, gpu, len(data)},
					{"force-cpu", tensor.ForceCPU, tensor.NeverThresholds, []*tensor.Device{gpu}, cpu, len(data)},
					{"minimize-transfers", tensor.MinimizeTransfers, tensor.NeverThresholds, []*tensor.Device{gpu, cpu}, nil, -1},
				} {
					t.Run(sc.name, func(t *testing.T) {
						in := on(sc.devs...)
						tensor.SetPlacement(sc.policy)
						tensor.SetThresholds(sc.th)
						tensor.ResetPlacementStats()
						y := tc.run(in)
						defer y.Release()
						st := tensor.PlacementStats()
						tensor.SetPlacement(tensor.Explicit)
						if sc.want != nil {
							require.Same(t, sc.want, y.Device())
						}
						require.Equal(t, map[string]int64{y.Device().Name(): 1}, st.Ops, "one placement, where the result is")
						if sc.wantMoves >= 0 {
							require.Equal(t, int64(sc.wantMoves), st.Moves)
						}
						got := testdevice.Float64s(t, y)
						require.Len(t, got, len(want))
						for i := range want {
							require.InDelta(t, want[i], got[i], 1e-4*(1+abs(want[i])), "element %d", i)
						}
					})
				}
			})
		}
	})
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestPlacementInPlaceOps: BatchNorm in training writes its running
// statistics in place, so under every policy it runs where they are, the
// input coming to them; statistics on two devices are misuse.
func TestPlacementInPlaceOps(t *testing.T) {
	cpu := testdevice.CPU(t)
	eachWebGPU(t, func(t *testing.T, gpu *tensor.Device) {
		r := rand.New(rand.NewPCG(13, 14))
		xs := randFloats(r, 4*3*5)
		run := func(x, mean, variance *tensor.Tensor) (y *tensor.Tensor, stats []float64) {
			y = tensor.BatchNorm(x, mean, variance, nil, nil, true, 0.1, 1e-5)
			return y, append(testdevice.Float64s(t, mean), testdevice.Float64s(t, variance)...)
		}
		withPlacement(t, tensor.Explicit, gpu)
		ref, wantStats := run(hostTensor(t, cpu, xs, 4, 3, 5), hostTensor(t, cpu, []float32{0, 0, 0}), hostTensor(t, cpu, []float32{1, 1, 1}))
		want := testdevice.Float64s(t, ref)
		ref.Release()

		for _, home := range []*tensor.Device{cpu, gpu} {
			other := gpu
			if home == gpu {
				other = cpu
			}
			for _, p := range []tensor.Placement{tensor.Auto, tensor.ForceGPU, tensor.ForceCPU, tensor.MinimizeTransfers} {
				t.Run(home.Name()+"/"+p.String(), func(t *testing.T) {
					x := hostTensor(t, other, xs, 4, 3, 5)
					mean, variance := hostTensor(t, home, []float32{0, 0, 0}), hostTensor(t, home, []float32{1, 1, 1})
					tensor.SetPlacement(p)
					tensor.SetThresholds(tensor.Thresholds{}) // Auto would send everything to the GPU
					tensor.ResetPlacementStats()
					y := tensor.BatchNorm(x, mean, variance, nil, nil, true, 0.1, 1e-5)
					defer y.Release()
					st := tensor.PlacementStats()
					tensor.SetPlacement(tensor.Explicit)
					require.Same(t, home, y.Device())
					require.Equal(t, map[string]int64{home.Name(): 1}, st.Ops)
					require.Equal(t, int64(1), st.Moves, "the input came to the statistics")
					require.InDeltaSlice(t, want, testdevice.Float64s(t, y), 1e-4)
					got := append(testdevice.Float64s(t, mean), testdevice.Float64s(t, variance)...)
					require.InDeltaSlice(t, wantStats, got, 1e-5, "updated in place")
				})
			}
		}

		tensor.SetPlacement(tensor.Auto)
		err := tensor.Catch(func() {
			tensor.BatchNorm(hostTensor(t, cpu, xs, 4, 3, 5), hostTensor(t, cpu, make([]float32, 3)),
				hostTensor(t, gpu, []float32{1, 1, 1}), nil, nil, true, 0.1, 1e-5)
		})
		tensor.SetPlacement(tensor.Explicit)
		require.ErrorContains(t, err, "BatchNorm: tensors on different devices: [3] float32 on cpu vs [3] float32 on "+gpu.Name()+" (they are written in place)")
	})
}
