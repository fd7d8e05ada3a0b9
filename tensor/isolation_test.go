package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// Failures stay with their cause: a failing op is reported once — by the
// read or Sync after it — and the device then works as before, for every
// later op, read and Sync. These tests run on every WebGPU adapter, opened
// by index, and check the work after the failure against float64
// references. The backend's own side is backend/wgpu/isolation_test.go.

// forEachWebGPUAdapter runs f on every WebGPU adapter, as subtests named
// like "webgpu:0-vulkan". Ops run where their operands are (Explicit).
func forEachWebGPUAdapter(t *testing.T, f func(t *testing.T, dev *tensor.Device)) {
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	ran := 0
	for _, a := range tensor.Adapters() {
		if !strings.HasPrefix(a.Name, "webgpu:") {
			continue
		}
		ran++
		t.Run(a.Name+"-"+strings.ToLower(a.Info.Backend), func(t *testing.T) {
			dev, err := tensor.Open(a.Name)
			require.NoError(t, err)
			_ = dev.Sync() // what earlier tests left on the shared device
			f(t, dev)
		})
	}
	if ran == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true requires a WebGPU adapter: %v", tensor.BackendErrors())
		}
		t.Skipf("no WebGPU adapter: %v", tensor.BackendErrors())
	}
}

// checkHealthy runs float32 work on dev — an elementwise chain, a matrix
// product and a row sum — and checks the results against float64
// references, then that Sync has nothing to report.
func checkHealthy(t *testing.T, dev *tensor.Device, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	const m, k, n = 7, 33, 5
	av, bv := make([]float32, m*k), make([]float32, k*n)
	for i := range av {
		av[i] = rng.Float32()*2 - 1
	}
	for i := range bv {
		bv[i] = rng.Float32()*2 - 1
	}
	a, b := tensor.FromFloat32(dev, av, m, k), tensor.FromFloat32(dev, bv, k, n)
	square := a.Mul(a)
	shifted := square.AddScalar(0.5)
	chain := shifted.Sigmoid()
	product := tensor.MatMul(a, b)
	rows := a.Sum([]int{1}, false)
	defer func() {
		for _, x := range []*tensor.Tensor{a, b, square, shifted, chain, product, rows} {
			x.Release()
		}
	}()

	got, err := chain.Float32s()
	require.NoError(t, err, "elementwise work after the failure")
	for i, x := range av {
		want := 1 / (1 + math.Exp(-(float64(x)*float64(x) + 0.5)))
		require.InDelta(t, want, got[i], 1e-6, "sigmoid(a²+0.5) element %d", i)
	}
	got, err = product.Float32s()
	require.NoError(t, err, "matmul after the failure")
	for i := range m {
		for j := range n {
			var want float64
			for l := range k {
				want += float64(av[i*k+l]) * float64(bv[l*n+j])
			}
			require.InDelta(t, want, got[i*n+j], 1e-5, "product [%d,%d]", i, j)
		}
	}
	got, err = rows.Float32s()
	require.NoError(t, err, "reduction after the failure")
	for i := range m {
		var want float64
		for l := range k {
			want += float64(av[i*k+l])
		}
		require.InDelta(t, want, got[i], 1e-5, "row sum %d", i)
	}
	require.NoError(t, dev.Sync(), "nothing left to report")
}

// badIndexOps are the four ops that index with an int32 tensor, each given
// an index out of range (3 for an axis of size 3, and -1).
var badIndexOps = []struct {
	op string
	f  func(x, bad *tensor.Tensor) *tensor.Tensor
}{
	{"Gather", func(x, bad *tensor.Tensor) *tensor.Tensor { return x.Gather(0, bad) }},
	{"IndexSelect", func(x, bad *tensor.Tensor) *tensor.Tensor { return x.IndexSelect(0, bad) }},
	{"ScatterAdd", func(x, bad *tensor.Tensor) *tensor.Tensor { return x.ScatterAdd(0, bad, x) }},
	{"OneHot", func(_, bad *tensor.Tensor) *tensor.Tensor { return tensor.OneHot(bad, 3) }},
}

// TestIsolationIndexOutOfRangeAtRead: the read after an out-of-range index
// returns hal.ErrIndexOutOfRange once; Sync then has nothing to report,
// the result reads back with its defined values, and later work is right.
func TestIsolationIndexOutOfRangeAtRead(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, dev *tensor.Device) {
		x := tensor.FromFloat32(dev, []float32{1, 2, 3})
		bad := tensor.FromInt32(dev, []int32{0, 3, -1})
		defer x.Release()
		defer bad.Release()
		// The defined values: gather gives 0 for a bad index, scatter skips it.
		want := map[string][]float32{
			"Gather":      {1, 0, 0},
			"IndexSelect": {1, 0, 0},
			"ScatterAdd":  {2, 2, 3},
			"OneHot":      {1, 0, 0, 0, 0, 0, 0, 0, 0},
		}
		for i, tc := range badIndexOps {
			t.Run(tc.op, func(t *testing.T) {
				got := tc.f(x, bad)
				defer got.Release()
				_, err := got.Float32s()
				require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
				assert.Contains(t, err.Error(), "index 3")
				assert.Contains(t, err.Error(), "size 3")
				require.NoError(t, dev.Sync(), "reported once, by the read")
				values, err := got.Float32s()
				require.NoError(t, err, "the result itself reads back")
				assert.Equal(t, want[tc.op], values)
				checkHealthy(t, dev, uint64(i))
			})
		}
	})
}

// TestIsolationIndexOutOfRangeAtSync: unread, the failure is Sync's to
// report, once; a server handling one bad request and then good ones sees
// the error in that request only.
func TestIsolationIndexOutOfRangeAtSync(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, dev *tensor.Device) {
		x := tensor.FromFloat32(dev, []float32{1, 2, 3})
		bad := tensor.FromInt32(dev, []int32{0, 3, -1})
		defer x.Release()
		defer bad.Release()
		for i, tc := range badIndexOps {
			t.Run(tc.op, func(t *testing.T) {
				tc.f(x, bad).Release() // never read
				err := dev.Sync()
				require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
				var te *tensor.Error
				require.True(t, errors.As(err, &te), "%T", err)
				assert.Contains(t, err.Error(), dev.Name())
				require.NoError(t, dev.Sync(), "reported once")
				checkHealthy(t, dev, uint64(10+i))
			})
		}
	})
}

// TestIsolationServerRequests interleaves bad requests with good ones, as
// a server would: each request reads its result and syncs. Only the bad
// requests fail, each with its own error; every good one gets the right
// values and a clean Sync.
func TestIsolationServerRequests(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, dev *tensor.Device) {
		table := tensor.FromFloat32(dev, []float32{10, 20, 30, 40}, 4, 1)
		defer table.Release()
		for req := range 12 {
			badRequest := req%3 == 1
			ids := []int32{int32(req % 4), int32((req + 1) % 4)}
			if badRequest {
				ids[1] = int32(4 + req) // past the table
			}
			index := tensor.FromInt32(dev, ids)
			rows := table.IndexSelect(0, index).MulScalar(0.5)
			got, err := rows.Float32s()
			if badRequest {
				require.ErrorIs(t, err, hal.ErrIndexOutOfRange, "request %d", req)
				assert.Contains(t, err.Error(), fmt.Sprintf("index %d", 4+req), "the error names this request's index")
			} else {
				require.NoError(t, err, "request %d", req)
				for i, id := range ids {
					assert.Equal(t, float32(float64(10*(id+1))*0.5), got[i], "request %d row %d", req, i)
				}
			}
			require.NoError(t, dev.Sync(), "request %d: nothing of this or an earlier request is left", req)
			index.Release()
			rows.Release()
		}
	})
}

// TestIsolationUnsupportedAtCall: an op in a dtype the device cannot run
// is refused at the call with hal.ErrUnsupported — float16 where the
// adapter lacks shader-f16 — and leaves nothing behind.
func TestIsolationUnsupportedAtCall(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, dev *tensor.Device) {
		if tensor.Supports(dev, "Exp", tensor.Float16) {
			t.Skipf("%v runs float16", dev)
		}
		x := tensor.FromFloat32(dev, []float32{1, 2, 3})
		defer x.Release()
		err := tensor.Catch(func() { x.Cast(tensor.Float16).Exp() })
		require.ErrorIs(t, err, hal.ErrUnsupported)
		assert.Contains(t, err.Error(), "float16")
		checkHealthy(t, dev, 20)
	})
}

// rejectingBackend is a WebGPU backend device whose Exp kernel the device
// refuses to compile (hal.ErrShaderRejected, at the call, as the real
// backend reports a rejected kernel), and which, once armed, reports an
// asynchronous validation failure (hal.ErrInvalid) at the next Read or
// Sync, once, as the real backend does for a command the library refused.
type rejectingBackend struct {
	hal.Device
	pending error
}

func (d *rejectingBackend) Unary(op hal.UnaryOp, dst, src hal.View, args hal.Args) error {
	if op == hal.Exp {
		return fmt.Errorf("webgpu: kernel exp/f32 on %s: %w: 1:1: error: (injected)", d.Info().Name, hal.ErrShaderRejected)
	}
	return d.Device.Unary(op, dst, src, args)
}

func (d *rejectingBackend) take() error {
	err := d.pending
	d.pending = nil
	return err
}

func (d *rejectingBackend) Read(src hal.Buffer, dst []byte) error {
	if err := d.take(); err != nil {
		return err
	}
	return d.Device.Read(src, dst)
}

func (d *rejectingBackend) Sync() error {
	if err := d.take(); err != nil {
		return err
	}
	return d.Device.Sync()
}

// TestIsolationRejectedKernel: an op whose kernel the device rejects fails
// at the call with hal.ErrShaderRejected; Sync reports it once (or not at
// all when a read already did); only that op fails, and the device runs
// float32 work as before.
func TestIsolationRejectedKernel(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, shared *tensor.Device) {
		var backend *rejectingBackend
		dev := tensor.OpenWrappedForTest(t, shared.Name(), func(hd hal.Device) hal.Device {
			backend = &rejectingBackend{Device: hd}
			return backend
		})
		x := tensor.FromFloat32(dev, []float32{0, 1, 2})
		defer x.Release()

		y := x.Exp()
		defer y.Release()
		require.ErrorIs(t, y.Err(), hal.ErrShaderRejected, "the op fails at the call")
		var te *tensor.Error
		require.True(t, errors.As(y.Err(), &te), "%T", y.Err())
		assert.Equal(t, "Exp", te.Op)
		require.ErrorIs(t, dev.Sync(), hal.ErrShaderRejected, "Sync reports it")
		require.NoError(t, dev.Sync(), "once")
		checkHealthy(t, dev, 30)

		// Read first: the read reports it, Sync does not again; the
		// failed tensor keeps its error.
		z := x.Exp()
		defer z.Release()
		_, err := z.Float32s()
		require.ErrorIs(t, err, hal.ErrShaderRejected)
		require.NoError(t, dev.Sync(), "the read reported it")
		_, err = z.Float32s()
		require.ErrorIs(t, err, hal.ErrShaderRejected, "the failed tensor keeps its error")
		// An op the device can run, on the same input, works.
		w := x.Sigmoid()
		defer w.Release()
		got, err := w.Float32s()
		require.NoError(t, err)
		for i, v := range []float64{0, 1, 2} {
			assert.InDelta(t, 1/(1+math.Exp(-v)), got[i], 1e-6)
		}
		checkHealthy(t, dev, 31)
	})
}

// TestIsolationValidationError: a validation failure the backend reports
// asynchronously (hal.ErrInvalid) surfaces once — at the next read, or at
// Sync — and the device then works.
func TestIsolationValidationError(t *testing.T) {
	forEachWebGPUAdapter(t, func(t *testing.T, shared *tensor.Device) {
		var backend *rejectingBackend
		dev := tensor.OpenWrappedForTest(t, shared.Name(), func(hd hal.Device) hal.Device {
			backend = &rejectingBackend{Device: hd}
			return backend
		})
		x := tensor.FromFloat32(dev, []float32{-1, 2, -3})
		defer x.Release()
		injected := fmt.Errorf("webgpu: kernel relu: %w: binding size too large (injected)", hal.ErrInvalid)

		backend.pending = injected
		r := x.ReLU()
		defer r.Release()
		_, err := r.Float32s()
		require.ErrorIs(t, err, hal.ErrInvalid, "the next read reports it")
		require.NoError(t, dev.Sync(), "once")
		got, err := r.Float32s()
		require.NoError(t, err)
		assert.Equal(t, []float32{0, 2, 0}, got)

		backend.pending = injected
		require.ErrorIs(t, dev.Sync(), hal.ErrInvalid, "or Sync, when it comes first")
		require.NoError(t, dev.Sync(), "once")
		checkHealthy(t, dev, 40)
	})
}
