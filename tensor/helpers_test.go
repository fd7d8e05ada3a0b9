package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
	"github.com/x448/float16"
)

func openCPU(t *testing.T) *Device {
	t.Helper()
	dev, err := Open("cpu")
	require.NoError(t, err)
	return dev
}

// webgpuAdapters is the WebGPU adapters the tests run on
// (WEBTENSOR_TEST_ADAPTERS and CI decide; see internal/testdevice/adapters),
// listed once.
var webgpuAdapters = sync.OnceValue(func() adapters.Selection {
	return adapters.Select(backendAdapters(webgpuBackend), BackendErrors()[webgpuBackend])
})

// openAdapter opens a listed adapter; failing to is a failure.
func openAdapter(t testing.TB, a adapters.Adapter) *Device {
	t.Helper()
	dev, err := Open(a.Device())
	require.NoError(t, err, "open %s (%s)", a.Name(), a.Info.Name)
	return dev
}

// forEachWebGPU runs f as a subtest on each WebGPU adapter, named by index
// and graphics API ("webgpu:1-opengles"). Without an adapter it is skipped,
// except under CI=true, where it fails.
func forEachWebGPU(t *testing.T, f func(t *testing.T, dev *Device)) {
	webgpuAdapters().Run(t, func(t *testing.T, a adapters.Adapter) { f(t, openAdapter(t, a)) })
}

// forEachDevice runs f as a subtest on the CPU device and on each WebGPU
// adapter, so that the same assertions hold on all of them.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *Device)) {
	t.Run("cpu", func(t *testing.T) { f(t, openCPU(t)) })
	forEachWebGPU(t, f)
}

func openSecondCPU(t *testing.T) *Device {
	t.Helper()
	dev, err := Open(secondCPU)
	require.NoError(t, err)
	return dev
}

// randomFloat32s returns n values in [-2, 2) from a seeded generator, so
// failures reproduce.
func randomFloat32s(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = rng.Float32()*4 - 2
	}
	return out
}

func newRand(t *testing.T) *rand.Rand {
	var seed uint64
	for _, c := range t.Name() {
		seed = seed*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, 1))
}

// read returns t's values and releases nothing; it fails the test on error.
func read(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	got, err := x.Float32s()
	require.NoError(t, err)
	return got
}

// requireClose checks got against float64 references, element by element,
// with tolerance tol(i).
func requireClose(t *testing.T, want []float64, got []float32, tol func(i int) float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if diff := math.Abs(float64(got[i]) - want[i]); !(diff <= tol(i)) {
			t.Fatalf("element %d: got %v, want %v (|diff| %g > %g)", i, got[i], want[i], diff, tol(i))
		}
	}
}

// float32 rounding of one result, with headroom for fused or reordered
// arithmetic and approximate transcendental functions on GPUs.
func elementwiseTol(want []float64) func(int) float64 {
	return func(i int) float64 { return 4e-7*math.Abs(want[i]) + 1e-7 }
}

// roundTo rounds v to what dtype stores, as the host does when uploading:
// the tests compute references from the rounded inputs.
func roundTo(dtype DType, v float64) float64 {
	switch dtype {
	case Float32:
		return float64(float32(v))
	case Float16:
		return float64(float16.Fromfloat32(float32(v)).Float32())
	case Int32, Int64:
		return math.Round(v) + 0 // no −0 in integers
	}
	return v
}

// randomValues returns n values uniform in [lo, hi), rounded to dtype.
func randomValues(rng *rand.Rand, dtype DType, n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = roundTo(dtype, lo+(hi-lo)*rng.Float64())
	}
	return out
}

// upload makes a contiguous tensor of dtype holding values (already
// representable in dtype). Float16 goes up as float32 and is cast on the
// device, since there is no FromFloat16.
func upload(dev *Device, dtype DType, values []float64, shape ...int) *Tensor {
	if shape == nil {
		shape = []int{len(values)}
	}
	switch dtype {
	case Float64:
		return FromFloat64(dev, values, shape...)
	case Int32:
		data := make([]int32, len(values))
		for i, v := range values {
			data[i] = int32(v)
		}
		return FromInt32(dev, data, shape...)
	case Int64:
		data := make([]int64, len(values))
		for i, v := range values {
			data[i] = int64(v)
		}
		return FromInt64(dev, data, shape...)
	}
	data := make([]float32, len(values))
	for i, v := range values {
		data[i] = float32(v)
	}
	t := FromFloat32(dev, data, shape...)
	if dtype == Float16 {
		defer t.Release()
		return t.Cast(Float16)
	}
	return t
}

// layout says how a test input is laid out in memory; the logical values
// are the same in every layout.
type layout int

const (
	packed     layout = iota // row-major, offset 0
	transposed               // the last two axes stored swapped (a Transpose view)
	strided                  // every other element along the last axis (a Slice view with step 2)
	offset                   // starts one element into its buffer (a Slice view)
)

var layouts = []layout{packed, transposed, strided, offset}

func (l layout) String() string {
	return [...]string{"packed", "transposed", "strided", "offset"}[l]
}

// uploadAs makes a tensor with the given logical values and shape, laid
// out as l. The result is a view (except for packed) and owns its own
// reference.
func uploadAs(dev *Device, dtype DType, values []float64, shape []int, l layout) *Tensor {
	r := len(shape)
	switch {
	case l == transposed && r >= 2:
		// Store the transpose of the last two axes, then view it back.
		swapped := append(slices.Clone(shape[:r-2]), shape[r-1], shape[r-2])
		stored := make([]float64, len(values))
		rows, cols := shape[r-2], shape[r-1]
		for i := range values {
			b, rc := i/(rows*cols), i%(rows*cols)
			row, col := rc/cols, rc%cols
			stored[b*rows*cols+col*rows+row] = values[i]
		}
		t := upload(dev, dtype, stored, swapped...)
		defer t.Release()
		return t.Transpose(-1, -2)
	case (l == strided || l == transposed) && r >= 1:
		wide := slices.Clone(shape)
		wide[r-1] *= 2
		stored := make([]float64, len(values)*2)
		for i, v := range values {
			stored[2*i] = v
		}
		t := upload(dev, dtype, stored, wide...)
		defer t.Release()
		return t.Slice(-1, 0, wide[r-1], 2)
	case l == offset:
		stored := append([]float64{roundTo(dtype, 42)}, values...)
		t := upload(dev, dtype, stored)
		defer t.Release()
		tail := t.Slice(0, 1, len(stored), 1)
		defer tail.Release()
		return tail.Reshape(shape...)
	}
	return upload(dev, dtype, values, shape...)
}

// read64 reads any dtype as float64, failing the test on error.
func read64(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	got, err := x.Float64s()
	require.NoError(t, err)
	return got
}

// checkClose compares got against want element by element within tol.
func checkClose(t *testing.T, want, got []float64, tol func(i int) float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if same(want[i], got[i]) {
			continue
		}
		if diff := math.Abs(got[i] - want[i]); !(diff <= tol(i)) {
			t.Fatalf("element %d of %d: got %v, want %v (|diff| %g > %g)", i, len(want), got[i], want[i], diff, tol(i))
		}
	}
}

// same treats NaN as equal to NaN and equal infinities as equal.
func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// family picks the tolerance of an op family for dtype, per element.
func familyTol(dtype DType, family opFamily, want []float64) func(int) float64 {
	tol := tolFor(dtype, family)
	return func(i int) float64 { return tol(want[i]) }
}

// forEachDType runs f for every dtype that dev supports for op; for the
// others it checks that probe (which runs op on a small input of the
// dtype) panics with an unsupported-operation error naming the dtype.
func forEachDType(t *testing.T, dev *Device, op string, probe func(DType), f func(t *testing.T, dtype DType)) {
	for _, dtype := range DTypes {
		t.Run(dtype.String(), func(t *testing.T) {
			if dtype == Int64 && !HoldsInt64(dev) {
				// No Int64 tensor exists there: Int64 data moved to it
				// becomes Int32 (TestInt64Narrowing).
				t.Skipf("%v holds int64 as int32", dev)
			}
			if !Supports(dev, op, dtype) {
				err := Catch(func() { probe(dtype) })
				require.Error(t, err, "%s on %v is not supported, yet it ran", op, dtype)
				require.ErrorIs(t, err, hal.ErrUnsupported)
				require.Contains(t, err.Error(), dtype.String())
				return
			}
			f(t, dtype)
		})
	}
}

// DTypes is every dtype in a stable order.
var DTypes = hal.DTypes

// strideIndex maps flat index i of shape to the flat index of the same
// element in a tensor of shape from that broadcasts to shape.
func broadcastIndex(shape, from []int, i int) int {
	j, stride := 0, 1
	for d := len(shape) - 1; d >= 0; d-- {
		c := i % shape[d]
		i /= shape[d]
		fd := d - (len(shape) - len(from))
		if fd >= 0 {
			if from[fd] != 1 {
				j += c * stride
			}
			stride *= from[fd]
		}
	}
	return j
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// probeUnary returns a probe for forEachDType that runs op on a
// one-element tensor.
func probeUnary(dev *Device, op func(*Tensor) *Tensor) func(DType) {
	return func(dtype DType) {
		x := upload(dev, dtype, []float64{1})
		defer x.Release()
		op(x).Release()
	}
}

// probeBinary is probeUnary for ops of two operands of one dtype.
func probeBinary(dev *Device, op func(a, b *Tensor) *Tensor) func(DType) {
	return probeUnary(dev, func(x *Tensor) *Tensor { return op(x, x) })
}
