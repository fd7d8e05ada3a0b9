//go:build cgo

package device

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/internal/testdevice/adapters"
)

// forEachDevice runs f as a subtest on a fresh runtime device of each
// adapter to test (see internal/testdevice/adapters), with the adapter's
// own limits and no memory cap. Without an adapter it is skipped, except
// under CI=true, where it fails.
func forEachDevice(t *testing.T, f func(t *testing.T, d *Device)) {
	adapters.Select(gpu.Adapters()).Run(t, func(t *testing.T, a adapters.Adapter) {
		s, err := gpu.Start()
		require.NoError(t, err)
		ga := s.Adapters[a.Index]
		d, err := Open(s, ga, ga.Info, ga.Raw.Limits, 0)
		require.NoError(t, err)
		defer func() { assert.NoError(t, d.Close()) }()
		f(t, d)
	})
}

// reluSource is a kernel written out in full, so that these tests need no
// template: dst[i] = max(src[i], 0) for i < n.
const reluSource = `struct P { n: u32 }
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<uniform> params: P;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	if id.x < params.n { dst[id.x] = max(src[id.x], 0.0); }
}`

func floats(xs ...float32) []byte {
	out := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// TestAsynchronousErrorSurfacesAtSync provokes a validation error the
// library reports asynchronously (binding more bytes than a buffer holds)
// and checks that the next Sync returns it, once, and that the device keeps
// working: a validation error does not lose the device.
func TestAsynchronousErrorSurfacesAtSync(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		require.NoError(t, d.Sync())
		k, err := d.Kernel("async-error-relu", 2, 1, func() (string, error) { return reluSource, nil })
		require.NoError(t, err)
		small, err := d.Alloc(16)
		require.NoError(t, err)
		defer d.Free(small)
		alloc := small.(*Buffer).Allocation()
		gpu.Run(func() {
			g := d.native.CreateBindGroup(k.pipeline, []webgpu.Buffer{alloc.handle, alloc.handle}, []uint64{1 << 30, 1 << 30}, d.rec.ring, ParamsBytes)
			g.Release()
		})

		err = d.Sync()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "validation error")
		assert.ErrorIs(t, err, hal.ErrInvalid, "typed")
		assert.NoError(t, d.Sync(), "the error is reported once")

		x, err := d.Alloc(8)
		require.NoError(t, err)
		defer d.Free(x)
		y, err := d.Alloc(8)
		require.NoError(t, err)
		defer d.Free(y)
		require.NoError(t, d.Write(x, floats(-1, 2)))
		var p [ParamsBytes]byte
		binary.LittleEndian.PutUint32(p[:], 2)
		d.Post(k, []*Allocation{y.(*Buffer).Allocation(), x.(*Buffer).Allocation()}, &p, 1, 1, 1)
		got := make([]byte, 8)
		require.NoError(t, d.Read(y, got))
		assert.Equal(t, floats(0, 2), got)
	})
}

// TestWGSLExtensions checks the enable-directive scanner that decides
// which device features a kernel needs.
func TestWGSLExtensions(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"@compute @workgroup_size(1) fn main() {}", nil},
		{"enable f16;\nfn f() {}", []string{"f16"}},
		{"  // leading comment\n/* block /* nested */ still */ enable f16 , subgroups ;\nenable subgroups_f16;", []string{"f16", "subgroups", "subgroups_f16"}},
		{"requires readonly_and_readwrite_storage_textures;\ndiagnostic(off, derivative_uniformity);\nenable f16;", []string{"f16"}},
		{"fn f() {}\nenable f16;", nil}, // not a directive after a declaration
		{"// enable f16;\nfn f() {}", nil},
		{"enable f16", nil}, // unterminated
	} {
		assert.Equal(t, tc.want, wgslExtensions(tc.src), "%q", tc.src)
	}
}
