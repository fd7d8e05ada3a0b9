//go:build cgo

package wgpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// TestReduceMatMulRender renders every variant of the reduce and matmul
// templates, float16 included (llvmpipe lacks shader-f16, so no test here
// can compile those on the device), and validates them with Tint's
// command-line compiler when one is installed.
func TestReduceMatMulRender(t *testing.T) {
	d := &Device{limits: &webgpu.Limits{MaxComputeInvocationsPerWorkgroup: 256, MaxComputeWorkgroupSizeX: 256,
		MaxComputeWorkgroupSizeY: 256, MaxComputeWorkgroupStorageSize: 16384}}
	sources := map[string]string{}
	for _, dt := range []hal.DType{hal.Float32, hal.Int32, hal.Float16} {
		for _, op := range hal.ReduceOps {
			if op == hal.LogSumExp && dt == hal.Int32 {
				continue
			}
			out := wgslType(dt)
			if op == hal.ArgMax || op == hal.ArgMin {
				out = "i32"
			}
			for _, flags := range []int{0, 1, 2, 4, 7, 10, 15} {
				for _, io := range [][2]string{{wgslType(dt), out}, {wgslType(dt), ""}, {"", out}, {"", ""}} {
					sh := d.newReduceShader(op, dt)
					sh.Src, sh.Dst = io[0], io[1]
					sh.Tree, sh.InnerFlat, sh.OuterFlat = flags&1 != 0, flags&2 != 0, flags&4 != 0
					if sh.Vec4 = flags&8 != 0 && sh.Src != ""; flags&8 != 0 && !sh.Vec4 {
						continue
					}
					sh.Enable = enableF16Types(sh.Src, sh.Dst)
					name := fmt.Sprintf("reduce-%v-%v-%d-%s-%s", op, dt, flags, or(io[0], "p"), or(io[1], "p"))
					src, err := render("reduce.wgsl", sh)
					require.NoError(t, err, name)
					sources[name] = src
				}
			}
		}
		if dt == hal.Int32 {
			continue
		}
		sh := d.newReduceShader(hal.Sum, dt)
		sh.Src, sh.Dst, sh.Dot, sh.Scale, sh.Tree, sh.InnerFlat = wgslType(dt), wgslType(dt), true, true, true, true
		sh.Enable = enableF16Types(sh.Src)
		src, err := render("reduce.wgsl", sh)
		require.NoError(t, err)
		sources["dot-"+dt.String()] = src
		mm := matmulShader{Tile: 16, TileSquared: 256, Src: wgslType(dt), Dst: wgslType(dt), Enable: enableF16Types(wgslType(dt))}
		mm.bind(nil)
		src, err = render("matmul.wgsl", mm)
		require.NoError(t, err)
		sources["matmul-"+dt.String()] = src
	}
	for name, src := range sources {
		assert.Equal(t, strings.Contains(src, "array<f16>"), strings.Contains(src, "enable f16;"), name)
		assert.NotContains(t, src, "<no value>", name)
	}
	if !validateWithTint(t, sources) {
		t.Skip("no tint on PATH: rendered, not validated")
	}
}

// TestSoftmaxRegsRender renders the softmax register mode's variants
// (scalar and vec4, f32 and f16, softmax and log_softmax, with and without
// subgroups) and validates them with tint where it is installed.
func TestSoftmaxRegsRender(t *testing.T) {
	sources := map[string]string{}
	for _, src := range []string{"f32", "f16"} {
		for _, vec := range []bool{false, true} {
			for _, log := range []bool{false, true} {
				for _, sg := range []bool{false, true} {
					sh := softmaxShader{Mode: "regs", Src: src, Enable: enableF16Types(src), Log: log, WorkgroupSize: 256, Subgroups: sg, Regs: 3, Vec4: vec}
					name := fmt.Sprintf("softmax-regs-%s-vec%v-log%v-sg%v", src, vec, log, sg)
					text, err := render("softmax.wgsl", sh)
					require.NoError(t, err, name)
					assert.NotContains(t, text, "<no value>", name)
					sources[name] = text
				}
			}
		}
	}
	if !validateWithTint(t, sources) {
		t.Skip("no tint on PATH: rendered, not validated")
	}
}

// TestSoftmaxWarpRender renders the softmax "warp" mode's variants (scalar
// and vec4, f32 and f16, softmax and log_softmax, with and without
// subgroups, bounded and exact rows, pitched and unravelled rows, both
// exponentials) and validates them with tint where it is installed. The
// mode keeps the row in unrolled registers: no private array may appear.
func TestSoftmaxWarpRender(t *testing.T) {
	sources := map[string]string{}
	for _, src := range []string{"f32", "f16"} {
		for flags := range 64 {
			vec, log, sg, exact, pitch, exactExp := flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0, flags&16 != 0, flags&32 != 0
			sh := softmaxShader{Mode: "warp", Src: src, Enable: enableF16Types(src), Log: log, WorkgroupSize: 256, Subgroups: sg,
				Lanes: 32, Vec4: vec, Units: []int{0, 1, 2}, Exact: exact, Pitch: pitch, ExactExp: exactExp}
			name := fmt.Sprintf("softmax-warp-%s-%d", src, flags)
			text, err := render("softmax.wgsl", sh)
			require.NoError(t, err, name)
			assert.NotContains(t, text, "<no value>", name)
			assert.NotContains(t, text, "var xs", name)
			assert.Contains(t, text, "x2 = ", name)
			assert.Equal(t, !pitch, strings.Contains(text, "unravel(load_row"), name)
			sources[name] = text
		}
	}
	if !validateWithTint(t, sources) {
		t.Skip("no tint on PATH: rendered, not validated")
	}
}
