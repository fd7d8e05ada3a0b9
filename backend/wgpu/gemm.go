//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// The GEMM path, in the order a MatMul takes it:
//
//  1. MatMul validates the operands into a gemm. Operands past one
//     binding run in windows instead (chunk_matmul.go), each piece an
//     ordinary gemm that takes steps 2 and 3.
//  2. plan chooses how the gemm runs, in this one place: the variant
//     (a forced override, the dot-product reduction for M = 1 or N = 1,
//     an autotuned choice for the shape class, the heuristic), the k
//     slices of a tiled variant, and whether an epilogue may join (not
//     when K takes several passes that accumulate through dst).
//  3. run records the plan: the variant's kernels (matmul.go: classic and
//     matvec; matmul_tiled.go: tiled and split-K), through the fusion
//     engine (d.fuse.produce) when an epilogue may join.

// MatMul records dst = alpha·a·b + beta·dst over the last two axes.
func (d *Device) MatMul(dst, a, b hal.View, alpha, beta float64) error {
	const name = hal.KernelMatMul
	if d.rt.Closed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	ops, err := d.chunkableOperands(name, dst, a, b)
	if err != nil {
		return err
	}
	out, x, y := ops[0], ops[1], ops[2]
	if err := d.supports(name, x.DType); err != nil {
		return err
	}
	r := len(out.Shape)
	shapes := fmt.Sprintf("%v·%v → %v", x.View, y.View, out.View)
	switch {
	case x.DType != y.DType || x.DType != out.DType:
		return fmt.Errorf("webgpu: %s: dtypes differ: %s: %w", name, shapes, hal.ErrInvalid)
	case r < 2 || len(x.Shape) != r || len(y.Shape) != r:
		return fmt.Errorf("webgpu: %s: operands need one rank ≥ 2: %s: %w", name, shapes, hal.ErrInvalid)
	case !slices.Equal(x.Shape[:r-2], out.Shape[:r-2]) || !slices.Equal(y.Shape[:r-2], out.Shape[:r-2]) ||
		x.Shape[r-2] != out.Shape[r-2] || y.Shape[r-1] != out.Shape[r-1] || x.Shape[r-1] != y.Shape[r-2]:
		return fmt.Errorf("webgpu: %s: shapes do not match [batch…, M, K]·[batch…, K, N] → [batch…, M, N]: %s: %w", name, shapes, hal.ErrInvalid)
	case !out.Contiguous():
		return fmt.Errorf("webgpu: %s: dst %v is not contiguous: %w", name, out.View, hal.ErrInvalid)
	}
	if err := independent(name, out, x, y); err != nil {
		return err
	}
	if out.Elements() == 0 {
		return nil
	}
	g := &gemm{d: d, out: out, x: x, y: y, m: out.Shape[r-2], k: x.Shape[r-1], n: out.Shape[r-1],
		alpha: alpha, beta: beta, shapes: shapes}
	g.batchShape, g.batchStrides = collapse(x.Shape[:r-2], x.Strides[:r-2], y.Strides[:r-2])
	g.batch = hal.View{Shape: g.batchShape}.Elements()
	if !d.withinBinding(out, x, y) {
		return d.matmulChunked(g) // beyond one binding: in windows
	}
	return g.run(g.plan())
}

// gemm is one validated MatMul.
type gemm struct {
	d              *Device
	out, x, y      operand
	m, k, n, batch int
	alpha, beta    float64
	batchShape     []int
	batchStrides   [][]int // a's and b's
	shapes         string  // for errors
	// producer replaces d.fuse.produce (tests hand their own epilogue).
	producer func(run func(epi *epilogue, s sink) error) error
}

// produce hands run to the fusion engine.
func (g *gemm) produce(run func(epi *epilogue, s sink) error) error {
	if g.producer != nil {
		return g.producer(run)
	}
	return g.d.fuse.produce(g.out, g.alpha, g.beta, run, g.x, g.y)
}

// gemmPlan is how one gemm runs.
type gemmPlan struct {
	config matmulConfig
	// splits is the number of k slices of a tiled config (1: one).
	splits int
	// fused: the product's result may take an epilogue (elementwise ops
	// that follow it), because K runs in one pass.
	fused bool
}

// plan chooses the variant of g: the override, then the dot-product
// reduction for a vector operand, then an autotuned choice for g's shape
// class, then a heuristic; and how that variant covers K.
func (g *gemm) plan() gemmPlan {
	d := g.d
	c, ok := matmulConfig{}, false
	if o := matmulOverride.Load(); o != nil && (o.Kind != matmulTiled || d.fits(*o)) {
		c, ok = *o, true
	}
	if !ok && (g.m == 1 || g.n == 1) {
		c, ok = matmulConfig{Kind: matmulVector}, true
	}
	if e := matmulEnvTile(); !ok && e != nil && d.fits(*e) {
		c, ok = *e, true
	}
	if !ok {
		c, ok = d.autotuned(g)
	}
	if !ok {
		c = d.matmulHeuristic(g)
	}
	switch c.Kind {
	case matmulVector:
		if g.m == 1 || g.n == 1 {
			return gemmPlan{config: c, splits: 1}
		}
		c = matmulConfig{Kind: matmulClassic} // forced onto a shape it cannot take
		fallthrough
	case matmulClassic:
		return gemmPlan{config: c, splits: 1, fused: g.k <= matmulChunk(d.matmulTile())}
	}
	if splits := g.splits(c); splits > 0 {
		return gemmPlan{config: c, splits: splits, fused: true}
	}
	// The partial sums of the slices would not fit one binding: passes.
	return gemmPlan{config: c, splits: 1}
}

// run records g as planned. Without fused, K passes accumulate through
// dst, which an epilogue replaces, so none joins.
func (g *gemm) run(p gemmPlan) error {
	switch p.config.Kind {
	case matmulVector:
		return g.d.matvec(g.out, g.x, g.y, g.m, g.k, g.n, g.alpha, g.beta)
	case matmulClassic:
		return g.classic(p.fused)
	}
	if !p.fused {
		return g.tiled(p.config, p.splits, nil, sink{d: g.d})
	}
	return g.produce(func(epi *epilogue, s sink) error { return g.tiled(p.config, p.splits, epi, s) })
}

// matmulHeuristic picks the variant when no tuned choice exists: by
// occupancy on hardware adapters (gpuMatMulHeuristic), by the measured
// llvmpipe rule on software ones.
func (d *Device) matmulHeuristic(g *gemm) matmulConfig {
	if d.hardwareGEMM() {
		return d.gpuMatMulHeuristic(g.batch, g.m, g.k, g.n)
	}
	return d.softwareMatMulHeuristic(g)
}

// matmulTileEnv names a tile that every MatMul with M, N > 1 runs on, as
// matmulConfig.String spells it (for example
// "tiled16x16-8x8-k16-double-swizzle"): one of matmulTiles or its
// Prefetch twin, the autotuner's candidates, so that a GPU run compares
// them case by case (bench -profile prints each case's kernel). Unknown
// names and tiles that do not fit the adapter are ignored.
const matmulTileEnv = "WEBTENSOR_MATMUL_TILE"

// matmulEnvTile is the tile matmulTileEnv names, or nil.
var matmulEnvTile = sync.OnceValue(func() *matmulConfig { return matmulTileNamed(os.Getenv(matmulTileEnv)) })

// matmulTileNamed returns the tile of matmulTiles, or its Prefetch twin,
// whose String is name; nil if none.
func matmulTileNamed(name string) *matmulConfig {
	if name == "" {
		return nil
	}
	for _, c := range matmulTiles {
		for _, p := range []bool{c.Prefetch, !c.Prefetch} {
			c.Prefetch = p
			if c.String() == name {
				return &c
			}
		}
	}
	return nil
}

// matmulForceHardware makes software adapters take the hardware adapters'
// GEMM choices (heuristic, autotune default), so that tests run them.
var matmulForceHardware atomic.Bool

// hardwareGEMM reports whether d chooses GEMM variants as a GPU: any
// adapter that is not a CPU (lavapipe and llvmpipe report "cpu").
func (d *Device) hardwareGEMM() bool {
	return d.info.Type != hal.AdapterCPU || matmulForceHardware.Load()
}

// softwareMatMulHeuristic: 32×32 blocks when the output is small in either
// dimension (fewer idle invocations at the edges), 8×8 per invocation
// otherwise, in 128×128 blocks from 128 up; split-K when the output has few
// blocks but K is long. On a CPU adapter workgroups run on a few cores, so
// big blocks (fewer, longer workgroups) win.
func (d *Device) softwareMatMulHeuristic(g *gemm) matmulConfig {
	// On llvmpipe at 512 and 1024: 128×128 blocks 15-16 GFLOPS, 64×64 with
	// 8×8 per invocation 10-12, the classic kernel 4-8.
	c := matmulTiles[tile128x128]
	switch {
	case g.m < 64 || g.n < 64:
		c = matmulTiles[tile32x32]
	case g.m < 128 || g.n < 128 || !d.fits(c):
		c = matmulTiles[tile64x64r8x8]
	}
	if !d.fits(c) {
		c = matmulTiles[tile32x32]
		if !d.fits(c) {
			return matmulConfig{Kind: matmulClassic}
		}
	}
	blocks := g.batch * ceilDiv(g.m, c.WY*c.TM) * ceilDiv(g.n, c.WX*c.TN)
	const wantBlocks, minSliceK = 64, 256
	if blocks < wantBlocks && g.k >= 4*minSliceK {
		c.Split = min(ceilDiv(wantBlocks, blocks), g.k/minSliceK)
	}
	return c
}

// gpuComputeUnits is the number of compute units (NVIDIA SMs, AMD CUs) the
// GPU heuristic fills. WebGPU does not tell it, so it assumes a large
// datacenter GPU (H100/H200: 132 SMs); on a smaller GPU the same choice
// runs in more waves, which costs little, while assuming a small GPU
// would leave most of a large one idle (1024² in 128×128 blocks is 64
// workgroups: the H200 ran it at 0.33× of cuBLAS).
const gpuComputeUnits = 132

// gpuWorkgroupsPerUnit is how many workgroups each compute unit should get
// so that one waiting on memory has another to switch to.
const gpuWorkgroupsPerUnit = 2

// gpuWantWorkgroups is the least number of workgroups a GPU product should
// launch: gpuWorkgroupsPerUnit per unit, less a quarter, so that a grid
// just short of two whole waves (2048² in 128×128 blocks: 256 workgroups,
// this morning's best ratio) keeps its big tiles.
const gpuWantWorkgroups = gpuComputeUnits * gpuWorkgroupsPerUnit * 3 / 4

// gpuMinSliceK is the shortest k slice split-K makes on a GPU: below it
// the slice's tile loads and the reduction outweigh the added workgroups.
const gpuMinSliceK = 128

// gpuTiles are the tiles the GPU heuristic chooses from, largest first:
// the first that gives gpuWantWorkgroups wins (big tiles reuse each loaded
// element most), else the smallest, split along K.
var gpuTiles = []int{tile128x128, tile128x64, tile64x64, tile32x64, tile32x32}

// gpuMatMulHeuristic picks a tiled variant for batch products of M×K·K×N
// on a GPU by occupancy: the largest tile whose workgroups (batch ×
// blocks) reach gpuWantWorkgroups, and split-K on the smallest when even
// that is too few and K is long.
func (d *Device) gpuMatMulHeuristic(batch, m, k, n int) matmulConfig {
	var fitting []matmulConfig
	for _, i := range gpuTiles {
		if d.fits(matmulTiles[i]) {
			fitting = append(fitting, matmulTiles[i])
		}
	}
	if len(fitting) == 0 {
		return matmulConfig{Kind: matmulClassic}
	}
	blocks := func(c matmulConfig) int { return batch * ceilDiv(m, c.WY*c.TM) * ceilDiv(n, c.WX*c.TN) }
	for _, c := range fitting {
		if blocks(c) >= gpuWantWorkgroups {
			return c
		}
	}
	c := fitting[len(fitting)-1]
	if k >= 2*gpuMinSliceK {
		c.Split = min(ceilDiv(gpuWantWorkgroups, blocks(c)), k/gpuMinSliceK)
	}
	return c
}

// splits is the number of k slices g runs in as c: c.Split, raised so that
// no slice is longer than tiledChunk. 0 means that the partial sums would
// not fit one binding, and g takes several passes instead.
func (g *gemm) splits(c matmulConfig) int {
	s := max(c.Split, ceilDiv(g.k, tiledChunk(c)), 1)
	if s == 1 {
		return 1
	}
	bytes := int64(s) * int64(g.batch) * int64(g.m) * int64(g.n) * 4
	if bytes > int64(g.d.limits.MaxStorageBufferBindingSize) || uint64(bytes) > g.d.limits.MaxBufferSize {
		return 0
	}
	return s
}
