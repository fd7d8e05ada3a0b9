//go:build cgo

package wgpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// withHardwareGEMM makes the software adapters choose GEMM variants as a
// GPU would for the rest of the test.
func withHardwareGEMM(t testing.TB) {
	matmulForceHardware.Store(true)
	t.Cleanup(func() { matmulForceHardware.Store(false) })
}

// TestGPUMatMulHeuristic is the GPU heuristic's table: tiles by the
// workgroups they give against gpuWantWorkgroups (198), split-K when even
// 32×32 blocks are too few.
func TestGPUMatMulHeuristic(t *testing.T) { forEachTestDevice(t, testGPUMatMulHeuristic) }

func testGPUMatMulHeuristic(t *testing.T, d *Device) {
	require.Equal(t, 198, gpuWantWorkgroups)
	split := func(tile, s int) matmulConfig {
		c := matmulTiles[tile]
		c.Split = s
		return c
	}
	for _, tc := range []struct {
		batch, m, k, n int
		want           matmulConfig
	}{
		{1, 4096, 4096, 4096, matmulTiles[tile128x128]}, // 1024 workgroups
		{1, 2048, 2048, 2048, matmulTiles[tile128x128]}, // 256
		{1, 1024, 1024, 1024, matmulTiles[tile64x64]},   // 128×128: 64, 128×64: 128, 64×64: 256
		{1, 1000, 100, 1000, matmulTiles[tile64x64]},
		{1, 512, 512, 512, matmulTiles[tile32x32]}, // 32×64: 128, 32×32: 256
		{1, 512, 512, 1024, matmulTiles[tile32x64]},
		{1, 2048, 64, 1536, matmulTiles[tile128x64]},  // 128×128: 16·12 = 192, 128×64: 384
		{1, 2048, 64, 256, matmulTiles[tile32x64]},    // 128×64: 64, 64×64: 128, 32×64: 256
		{64, 256, 256, 256, matmulTiles[tile128x128]}, // bmm: 64 batches × 4 blocks
		{8, 256, 256, 256, matmulTiles[tile32x64]},    // 8 × 32 = 256
		{1, 256, 256, 256, split(tile32x32, 2)},       // 64 blocks; K allows 2 slices of 128
		{1, 64, 4096, 64, split(tile32x32, 32)},       // 4 blocks, K 4096: 32 slices
		{1, 127, 1025, 33, split(tile32x32, 8)},       // 4 blocks: ⌈198/4⌉ = 50, K allows 8
		{1, 7, 3, 7, matmulTiles[tile32x32]},          // K too short to split
		{1, 255, 255, 257, matmulTiles[tile32x32]},    // 8·9 = 72 blocks, K < 256
	} {
		got := d.gpuMatMulHeuristic(tc.batch, tc.m, tc.k, tc.n)
		assert.Equal(t, tc.want, got, "%d×%d×%d×%d: got %v", tc.batch, tc.m, tc.k, tc.n, got)
	}

	// The software adapters are told apart by their type and keep their
	// own rule unless forced.
	g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: 1024, k: 1024, n: 1024, batch: 1}
	if d.info.Type == hal.AdapterCPU {
		assert.False(t, d.hardwareGEMM())
		assert.Equal(t, matmulTiles[tile128x128], d.matmulHeuristic(g), "llvmpipe's measured rule")
		withHardwareGEMM(t)
	} else {
		// A GPU takes the GPU rule unforced (the H200 in ../shared/gpu runs).
		assert.True(t, d.hardwareGEMM())
	}
	assert.Equal(t, matmulTiles[tile64x64], d.matmulHeuristic(g))

	// Tuning stays bounded: the heuristic's choice and its prefetch twin
	// first, each tile once more at most (split), no duplicates.
	for _, sz := range [][4]int{{1, 512, 512, 512}, {64, 256, 256, 256}, {1, 64, 4096, 64}, {1, 4096, 4096, 4096}} {
		cands := d.matmulCandidates(sz[0], sz[1], sz[2], sz[3])
		assert.LessOrEqual(t, len(cands), 2*len(matmulTiles)+2, "%v", sz)
		first := d.gpuMatMulHeuristic(sz[0], sz[1], sz[2], sz[3])
		assert.Equal(t, first, cands[0], "%v", sz)
		first.Prefetch = true
		assert.Equal(t, first, cands[1], "%v", sz)
		for i, c := range cands {
			assert.NotContains(t, cands[i+1:], c, "%v", sz)
		}
	}
}

// TestMatMulGPUChoices runs products over odd sizes (1, 7, 33, 127, 255,
// 257, 1000; K 1, 3, 1025) with the GPU heuristic choosing, as on a
// hardware adapter, against float64, batched and transposed included.
func TestMatMulGPUChoices(t *testing.T) { forEachTestDevice(t, testMatMulGPUChoices) }

func testMatMulGPUChoices(t *testing.T, d *Device) {
	withHardwareGEMM(t)
	useAutotuneDir(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []matmulCase{
		{m: 7, k: 1, n: 33, alpha: 1},
		{m: 127, k: 3, n: 255, alpha: 1, beta: 0.5},
		{m: 257, k: 1025, n: 33, transA: true, alpha: 1},   // split-K
		{m: 33, k: 1025, n: 127, transB: true, alpha: 0.5}, // split-K
		{m: 1000, k: 3, n: 257, alpha: 1},                  // 64×64 blocks
		{m: 255, k: 7, n: 1000, transA: true, transB: true, alpha: 1},
		{m: 2, k: 1025, n: 3, alpha: -1, nanDst: true},
		{batch: []int{5}, m: 33, k: 257, n: 127, alpha: 1}, // batch × blocks
		{batch: []int{2, 3}, m: 127, k: 33, n: 7, bBcast: []int{0}, transB: true, alpha: 1, beta: 1},
	} {
		g := &gemm{d: d, m: c.m, k: c.k, n: c.n, batch: max(hal.View{Shape: c.batch}.Elements(), 1)}
		choice := d.gpuMatMulHeuristic(g.batch, g.m, g.k, g.n)
		t.Run(fmt.Sprintf("%+v/%v", c, choice), func(t *testing.T) { runMatMul(t, d, c, rng) })
	}
}

// TestMatMulOddShapes runs every variant, forced, on the odd sizes, with
// the new GPU tiles also split along K.
func TestMatMulOddShapes(t *testing.T) { forEachTestDevice(t, testMatMulOddShapes) }

func testMatMulOddShapes(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(23, 24))
	cases := []matmulCase{
		{m: 1, k: 3, n: 257, alpha: 1},
		{m: 257, k: 1, n: 1, alpha: 1},
		{m: 7, k: 1025, n: 33, transA: true, alpha: 1},
		{m: 127, k: 3, n: 255, transB: true, alpha: 1, beta: 0.5},
		{m: 33, k: 1025, n: 1000, alpha: 1},
		{batch: []int{3}, m: 33, k: 7, n: 127, aBcast: []int{0}, alpha: 1},
	}
	variants := matmulVariants(d)
	for _, i := range []int{tile32x64, tile128x64} {
		c := matmulTiles[i]
		c.Split = 3
		variants = append(variants, c)
	}
	for _, v := range variants {
		if v.Kind == matmulTiled && !d.fits(v) {
			continue
		}
		t.Run(v.String(), func(t *testing.T) {
			withMatMulVariant(t, v)
			for _, c := range cases {
				t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) { runMatMul(t, d, c, rng) })
			}
		})
	}
}

// TestAutotuneDefault: tuning is on by default only for hardware adapters
// outside tests, WEBTENSOR_AUTOTUNE=0 turns it and saved choices off, =1
// turns it on for software adapters too, and batched products tune their
// own class.
func TestAutotuneDefault(t *testing.T) { forEachTestDevice(t, testAutotuneDefault) }

func testAutotuneDefault(t *testing.T, d *Device) {
	t.Cleanup(func() { matmulOverride.Store(nil) })
	rng := rand.New(rand.NewPCG(25, 26))
	small := matmulCase{m: 20, k: 30, n: 40, alpha: 1}
	batched := matmulCase{batch: []int{3}, m: 20, k: 30, n: 40, alpha: 1}
	classOf := func(c matmulCase) string {
		return shapeClass(hal.Float32, len(c.batch) > 0, c.m, c.k, c.n)
	}
	saved := func(t *testing.T, dir string) map[string]bool {
		t.Helper()
		autotuneTables.Clear() // as a new process would read it
		d.autotuneTable()
		tab, _ := autotuneTables.Load(adapterKey(d.info))
		classes := map[string]bool{}
		for class := range tab.(*autotuneTable).choices {
			classes[class] = true
		}
		return classes
	}
	notQuiet := func(t *testing.T) {
		prev := autotuneQuiet
		autotuneQuiet = func() bool { return false }
		t.Cleanup(func() { autotuneQuiet = prev })
	}

	t.Run("software adapter: off", func(t *testing.T) {
		if d.info.Type != hal.AdapterCPU {
			t.Skipf("%s is a %s adapter: the hardware cases below cover it", d.info.Name, d.info.Type)
		}
		dir := useAutotuneDir(t)
		notQuiet(t)
		runMatMul(t, d, small, rng)
		assert.NoFileExists(t, filepath.Join(dir, adapterKey(d.info)+".json"))
	})
	t.Run("hardware under test: off", func(t *testing.T) {
		dir := useAutotuneDir(t)
		withHardwareGEMM(t)
		runMatMul(t, d, small, rng)
		assert.NoFileExists(t, filepath.Join(dir, adapterKey(d.info)+".json"))
	})
	t.Run("hardware: on", func(t *testing.T) {
		dir := useAutotuneDir(t)
		withHardwareGEMM(t)
		notQuiet(t)
		runMatMul(t, d, small, rng)
		runMatMul(t, d, batched, rng)
		assert.Equal(t, map[string]bool{classOf(small): true, classOf(batched): true}, saved(t, dir))
		assert.Nil(t, matmulOverride.Load())
	})
	t.Run("hardware, WEBTENSOR_AUTOTUNE=0: off", func(t *testing.T) {
		dir := useAutotuneDir(t)
		withHardwareGEMM(t)
		notQuiet(t)
		t.Setenv(autotuneEnv, "0")
		runMatMul(t, d, small, rng)
		assert.NoFileExists(t, filepath.Join(dir, adapterKey(d.info)+".json"))

		// A saved choice is ignored too: the heuristic decides.
		forced := matmulTiles[tile32x64]
		data := fmt.Sprintf(`{"candidates": %d, "choices": {%q: {"Kind": 0, "WX": 16, "WY": 8, "TM": 4, "TN": 4, "BK": 16}}}`,
			autotuneCandidates, classOf(small))
		require.NoError(t, os.WriteFile(filepath.Join(dir, adapterKey(d.info)+".json"), []byte(data), 0o644))
		autotuneTables.Clear()
		g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: small.m, k: small.k, n: small.n, batch: 1}
		assert.Equal(t, d.gpuMatMulHeuristic(1, small.m, small.k, small.n), g.plan().config)
		t.Setenv(autotuneEnv, "")
		assert.Equal(t, forced, g.plan().config, "the saved choice, once allowed")
	})
	t.Run("software, WEBTENSOR_AUTOTUNE=1: on", func(t *testing.T) {
		dir := useAutotuneDir(t)
		t.Setenv(autotuneEnv, "1")
		runMatMul(t, d, batched, rng)
		assert.Equal(t, map[string]bool{classOf(batched): true}, saved(t, dir))
	})
}
