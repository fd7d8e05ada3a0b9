//go:build cgo

package wgpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Failures stay with their cause: a failing kernel fails its own op, at
// the call when that can be known then (a kernel the device cannot run or
// refuses to compile), else at the next Read or Sync, once; nothing of it
// is kept, and the device then runs every later kernel as before. Each
// test runs on a device of its own on every adapter, and checks float32
// work after the failure against float64 references.

// forEachIsolationAdapter runs f on a fresh device of every adapter, as
// subtests named like "webgpu:0-vulkan".
func forEachIsolationAdapter(t *testing.T, f func(t *testing.T, d *Device)) {
	infos, err := Adapters()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true requires a WebGPU device: %v", err)
		}
		t.Skipf("no WebGPU device: %v", err)
	}
	for i, info := range infos {
		t.Run(fmt.Sprintf("webgpu:%d-%s", i, strings.ToLower(info.Backend)), func(t *testing.T) {
			h, err := Open(i)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, h.Close()) })
			f(t, h.(*Device))
		})
	}
}

// upload returns a new buffer holding v (float32 or int32 words).
func upload[T float32 | int32](t *testing.T, d *Device, v []T) hal.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(4 * len(v)))
	require.NoError(t, err)
	t.Cleanup(func() { d.Free(b) })
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		switch x := any(x).(type) {
		case float32:
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		case int32:
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
		}
	}
	require.NoError(t, d.Write(b, raw))
	return b
}

// download reads n float32 values, or returns the Read's error.
func download(d *Device, b hal.Buffer, n int) ([]float32, error) {
	raw := make([]byte, 4*n)
	if err := d.Read(b, raw); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// requireHealthy runs float32 work — an elementwise chain, a gather with
// valid indices (which binds the fault word) and a row sum — and checks
// it against float64 references, then that Sync reports nothing.
func requireHealthy(t *testing.T, d *Device, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	const rows, cols = 9, 57
	n := rows * cols
	av, bv := make([]float32, n), make([]float32, n)
	idx := make([]int32, n)
	for i := range av {
		av[i], bv[i] = rng.Float32()*2-1, rng.Float32()*2-1
		idx[i] = int32(rng.IntN(n))
	}
	a, b, index := upload(t, d, av), upload(t, d, bv), upload(t, d, idx)
	out := upload(t, d, make([]float32, n))
	gathered := upload(t, d, make([]float32, n))
	sums := upload(t, d, make([]float32, rows))
	av32, bv32, ov := hal.Contiguous(a, hal.Float32, n), hal.Contiguous(b, hal.Float32, n), hal.Contiguous(out, hal.Float32, n)
	require.NoError(t, d.Binary(hal.Add, ov, av32, bv32))
	require.NoError(t, d.Binary(hal.Mul, ov, ov, av32))
	require.NoError(t, d.Unary(hal.Exp, ov, ov, hal.Args{}))
	require.NoError(t, d.Gather(hal.Contiguous(gathered, hal.Float32, n), av32, hal.Contiguous(index, hal.Int32, n), 0))
	require.NoError(t, d.Reduce(hal.Sum, hal.Contiguous(sums, hal.Float32, rows), hal.Contiguous(a, hal.Float32, rows, cols), 1))

	got, err := download(d, out, n)
	require.NoError(t, err, "elementwise work after the failure")
	for i := range av {
		want := math.Exp((float64(av[i]) + float64(bv[i])) * float64(av[i]))
		require.InDelta(t, want, got[i], 2e-6*want, "exp((a+b)·a) element %d", i)
	}
	got, err = download(d, gathered, n)
	require.NoError(t, err, "gather after the failure")
	for i, j := range idx {
		require.Equal(t, av[j], got[i], "gathered element %d", i)
	}
	got, err = download(d, sums, rows)
	require.NoError(t, err, "reduction after the failure")
	for r := range rows {
		var want float64
		for c := range cols {
			want += float64(av[r*cols+c])
		}
		require.InDelta(t, want, got[r], 1e-5, "row sum %d", r)
	}
	require.NoError(t, d.Sync(), "nothing left to report")
}

// TestIsolationIndexOutOfRange: the fault word reports an out-of-range
// index once — at the Read or the Sync that comes first — and is clear
// for the kernels after it.
func TestIsolationIndexOutOfRange(t *testing.T) {
	forEachIsolationAdapter(t, func(t *testing.T, d *Device) {
		t.Run("gather", func(t *testing.T) {
			src := upload(t, d, []float32{1, 2, 3})
			index := upload(t, d, []int32{0, 3, -1})
			dst := upload(t, d, make([]float32, 3))
			require.NoError(t, d.Gather(hal.Contiguous(dst, hal.Float32, 3), hal.Contiguous(src, hal.Float32, 3), hal.Contiguous(index, hal.Int32, 3), 0))
			_, err := download(d, dst, 3)
			require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
			assert.Contains(t, err.Error(), "gather: index 3 is out of range for axis 0 of size 3")
			got, err := download(d, dst, 3)
			require.NoError(t, err, "reported once")
			assert.Equal(t, []float32{1, 0, 0}, got, "bad indices gather 0")
			require.NoError(t, d.Sync())
			requireHealthy(t, d, 1)
		})
		t.Run("scatter_add", func(t *testing.T) {
			dst := upload(t, d, make([]float32, 3))
			index := upload(t, d, []int32{2, 5})
			src := upload(t, d, []float32{10, 20})
			require.NoError(t, d.ScatterAdd(hal.Contiguous(dst, hal.Float32, 3), hal.Contiguous(index, hal.Int32, 2), hal.Contiguous(src, hal.Float32, 2), 0))
			err := d.Sync()
			require.ErrorIs(t, err, hal.ErrIndexOutOfRange)
			assert.Contains(t, err.Error(), "scatter_add: index 5")
			require.NoError(t, d.Sync(), "reported once")
			got, err := download(d, dst, 3)
			require.NoError(t, err)
			assert.Equal(t, []float32{0, 0, 10}, got, "the bad index is skipped")
			requireHealthy(t, d, 2)
		})
	})
}

// TestIsolationRejectedShader: a kernel the device refuses fails at the
// call with hal.ErrShaderRejected, is remembered as refused (not compiled
// again), and leaves nothing for Read or Sync to report.
func TestIsolationRejectedShader(t *testing.T) {
	forEachIsolationAdapter(t, func(t *testing.T, d *Device) {
		renders := 0
		broken := func() (string, error) {
			renders++
			return "@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }", nil
		}
		_, err := d.rt.Kernel("isolation-broken", 1, 1, broken)
		require.ErrorIs(t, err, hal.ErrShaderRejected)
		assert.Contains(t, err.Error(), "undefined_name", "the compiler's diagnosis")
		_, again := d.rt.Kernel("isolation-broken", 1, 1, broken)
		require.ErrorIs(t, again, hal.ErrShaderRejected, "asking again fails again")
		assert.Equal(t, 1, renders, "without compiling again")
		require.NoError(t, d.Sync(), "a rejected shader is the op's failure, not the device's")
		requireHealthy(t, d, 3)
	})
}

// TestIsolationUnsupportedBeforeCompile: a kernel that enables a WGSL
// extension the device lacks is refused with hal.ErrUnsupported before
// any compile (a compile would say hal.ErrShaderRejected); a device that
// has the feature compiles it.
func TestIsolationUnsupportedBeforeCompile(t *testing.T) {
	forEachIsolationAdapter(t, func(t *testing.T, d *Device) {
		for _, tc := range []struct {
			feature string
			has     bool
			source  string
		}{
			{"shader-f16", d.rt.HasF16(), `// a comment first
enable f16;
@group(0) @binding(0) var<storage, read_write> a: array<f16>;
struct P { n: u32 }
@group(0) @binding(1) var<uniform> params: P;
@compute @workgroup_size(1) fn main() { a[0] = a[0] + 1.0h; }`},
			{"subgroups", d.rt.HasSubgroups(), `enable subgroups;
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
struct P { n: u32 }
@group(0) @binding(1) var<uniform> params: P;
@compute @workgroup_size(32) fn main(@builtin(local_invocation_index) i: u32) { a[i] = subgroupAdd(a[i]); }`},
		} {
			t.Run(tc.feature, func(t *testing.T) {
				renders := 0
				source := func() (string, error) { renders++; return tc.source, nil }
				k, err := d.rt.Kernel("isolation-needs-"+tc.feature, 1, 1, source)
				if tc.has {
					require.NoError(t, err, "the device has %s", tc.feature)
					require.NotNil(t, k)
				} else {
					require.ErrorIs(t, err, hal.ErrUnsupported)
					assert.False(t, errors.Is(err, hal.ErrShaderRejected), "refused before compiling: %v", err)
					assert.Contains(t, err.Error(), tc.feature)
					_, err = d.rt.Kernel("isolation-needs-"+tc.feature, 1, 1, source)
					require.ErrorIs(t, err, hal.ErrUnsupported)
					assert.Equal(t, 1, renders, "remembered")
				}
				require.NoError(t, d.Sync())
			})
		}
		requireHealthy(t, d, 4)
	})
}

// isolationKernels compiles a ReLU kernel over (dst, src) and a kernel
// that binds two read-write buffers: given one buffer twice, WebGPU
// refuses it when the pass is finished ("writable storage buffer binding
// aliasing"), which fails the whole command buffer.
func isolationKernels(t *testing.T, d *Device) (relu, alias *device.Kernel) {
	t.Helper()
	relu, err := d.rt.Kernel("isolation-relu", 2, 1, func() (string, error) {
		return render("elementwise.wgsl", ewShader{
			WorkgroupSize: d.workgroupSize(), Math: true, DstType: "f32",
			Inputs: []ewInput{{Binding: 1, Type: "f32"}},
			Reads:  []ewRead{{Name: "a", Array: "in1", Slot: 1, Type: "f32"}},
			Value:  unaryFloat[hal.ReLU],
		})
	})
	require.NoError(t, err)
	alias, err = d.rt.Kernel("isolation-alias", 2, 2, func() (string, error) {
		return `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
struct P { n: u32 }
@group(0) @binding(2) var<uniform> params: P;
@compute @workgroup_size(1) fn main() { a[0] = b[0] + 1.0; }`, nil
	})
	require.NoError(t, err)
	return relu, alias
}

// TestIsolationBindingRefused: a dispatch whose bind group the device
// refuses (a binding past the end of its buffer) fails alone: the
// dispatches before and after it in the same batch run, the error
// (hal.ErrInvalid, naming the kernel) is reported once, and later batches
// run.
func TestIsolationBindingRefused(t *testing.T) {
	forEachIsolationAdapter(t, func(t *testing.T, d *Device) {
		defer unfused(d)()
		relu, _ := isolationKernels(t, d)
		x := upload(t, d, []float32{-1, 2, -3, 4})
		xv := hal.Contiguous(x, hal.Float32, 4)
		small := upload(t, d, []float32{0})
		stretched := small.(*device.Buffer).Allocation().Window(0, 1<<20)
		before := d.Stats().Submits

		require.NoError(t, d.Unary(hal.ReLU, xv, xv, hal.Args{}))
		var p params
		p.u32(1).u32(1)
		d.post(dispatch{k: relu, buffers: []*device.Allocation{stretched, stretched}, params: p, x: 1, y: 1, z: 1})
		require.NoError(t, d.Binary(hal.Add, xv, xv, xv)) // depends on the ReLU

		err := d.Sync()
		require.ErrorIs(t, err, hal.ErrInvalid)
		assert.Contains(t, err.Error(), "kernel isolation-relu: binding its buffers")
		assert.Equal(t, int64(1), d.Stats().Submits-before, "one batch")
		require.NoError(t, d.Sync(), "reported once")
		got, err := download(d, x, 4)
		require.NoError(t, err)
		assert.Equal(t, []float32{0, 4, 0, 8}, got, "the rest of the batch ran, in order")
		requireHealthy(t, d, 5)
	})
}

// TestIsolationBatchRefused: a dispatch that makes WebGPU refuse its whole
// command buffer fails alone: the batch is run again one dispatch at a
// time, so the dispatches around it run in order, and the error
// (hal.ErrInvalid, naming the kernel) is reported once.
func TestIsolationBatchRefused(t *testing.T) {
	forEachIsolationAdapter(t, func(t *testing.T, d *Device) {
		defer unfused(d)()
		_, alias := isolationKernels(t, d)
		x := upload(t, d, []float32{-1, 2, -3, 4})
		xv := hal.Contiguous(x, hal.Float32, 4)
		z := upload(t, d, []float32{7})
		za := z.(*device.Buffer).Allocation()

		require.NoError(t, d.Unary(hal.ReLU, xv, xv, hal.Args{}))
		var p params
		p.u32(1)
		d.post(dispatch{k: alias, buffers: []*device.Allocation{za, za}, params: p, x: 1, y: 1, z: 1})
		require.NoError(t, d.Binary(hal.Add, xv, xv, xv))

		got, err := download(d, x, 4)
		require.ErrorIs(t, err, hal.ErrInvalid, "the next Read reports it")
		assert.Contains(t, err.Error(), "kernel isolation-alias")
		assert.Nil(t, got)
		got, err = download(d, x, 4)
		require.NoError(t, err, "reported once")
		assert.Equal(t, []float32{0, 4, 0, 8}, got, "the dispatches around it ran, in order")
		zv, err := download(d, z, 1)
		require.NoError(t, err)
		assert.Equal(t, []float32{7}, zv, "the refused dispatch ran nothing")
		require.NoError(t, d.Sync())
		requireHealthy(t, d, 6)
	})
}
