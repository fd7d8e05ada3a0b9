//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// matmulKind is a family of MatMul kernels.
type matmulKind uint8

const (
	matmulTiled   matmulKind = iota // shaders/matmul_tiled.wgsl, optionally split-K
	matmulClassic                   // shaders/matmul.wgsl
	matmulVector                    // M = 1 or N = 1 through the dot-product reduction
)

// matmulConfig is one MatMul variant. For matmulTiled: a workgroup of
// WX×WY invocations, each TM×TN outputs (TM, TN multiples of 4), a k step
// of BK, Split k slices (≤ 1: none; more are reduced by a second kernel),
// NoVec to stage operands one element at a time even where vec4 loads
// would do, Prefetch to load the next k step into registers while the
// current one multiplies, Double to keep two stages of the tiles in
// workgroup memory (one barrier per k step; implies Prefetch), Swizzle to
// XOR the tiles' vec4 index by the k row so that the stash that transposes
// an operand writes without bank conflicts (see shaders/matmul_tiled.wgsl),
// Warp to lay each 32 consecutive invocations (an NVIDIA warp) out as 8
// along N by 4 along M instead of 16 by 2, so that per k step a warp reads
// 8 neighbouring vec4s of b (128 bytes, one shared-memory wavefront) and
// 4 of a (broadcast), the warp tiling of the fast CUDA SGEMMs.
type matmulConfig struct {
	Kind               matmulKind
	WX, WY, TM, TN, BK int
	Split              int
	NoVec              bool
	Prefetch           bool `json:",omitempty"`
	Double             bool `json:",omitempty"`
	Swizzle            bool `json:",omitempty"`
	Warp               bool `json:",omitempty"`
}

func (c matmulConfig) String() string {
	switch c.Kind {
	case matmulClassic:
		return "classic"
	case matmulVector:
		return "vector"
	}
	s := fmt.Sprintf("tiled%dx%d-%dx%d-k%d", c.WX, c.WY, c.TM, c.TN, c.BK)
	if c.Split > 1 {
		s += fmt.Sprintf("-split%d", c.Split)
	}
	if c.NoVec {
		s += "-novec"
	}
	if c.Prefetch {
		s += "-prefetch"
	}
	if c.Double {
		s += "-double"
	}
	if c.Swizzle {
		s += "-swizzle"
	}
	if c.Warp {
		s += "-warp"
	}
	return s
}

// matmulTiles are the tile shapes the heuristic and autotune choose from,
// indexed by the tile… constants (autotune tables store configs, not
// indices, so the list may grow).
var matmulTiles = []matmulConfig{
	tile32x32:     {WX: 8, WY: 8, TM: 4, TN: 4, BK: 16},   // 32×32: small or skinny outputs
	tile64x64:     {WX: 16, WY: 16, TM: 4, TN: 4, BK: 16}, // 64×64, the classic shape
	tile64x64r8x8: {WX: 8, WY: 8, TM: 8, TN: 8, BK: 8},    // 64×64 with 8×8 per invocation (gpu.cpp's best)
	tile64x64r8x4: {WX: 16, WY: 8, TM: 8, TN: 4, BK: 16},  // 64×64, 8×4 per invocation
	tile128x128:   {WX: 16, WY: 16, TM: 8, TN: 8, BK: 8},  // 128×128 for large outputs on big GPUs
	tile32x64:     {WX: 16, WY: 8, TM: 4, TN: 4, BK: 16},  // 32×64 (128 invocations): medium outputs on GPUs
	tile128x64:    {WX: 16, WY: 16, TM: 8, TN: 4, BK: 16}, // 128×64, 8×4 per invocation
	// 128×128 with a k step of 16 (half the barriers) and the next step
	// prefetched: for the largest products on GPUs.
	tile128x128k16: {WX: 16, WY: 16, TM: 8, TN: 8, BK: 16, Prefetch: true},
	// Two-stage (one barrier per k step), swizzled tiles, the shape of the
	// fastest WebGPU SGEMMs: 8×8 per invocation in 128×128 (32 KiB of
	// workgroup memory at k16, 16 at k8) and 64×128 (128 invocations);
	// 8×4 in 128×64 (today's best on the H200 at 1024 and 4096) and 64×64
	// (more workgroups: 1024² gives 256, a 64×256³ bmm 1024).
	tile128x128db:   {WX: 16, WY: 16, TM: 8, TN: 8, BK: 16, Double: true, Swizzle: true},
	tile128x128db8:  {WX: 16, WY: 16, TM: 8, TN: 8, BK: 8, Double: true, Swizzle: true},
	tile64x128db:    {WX: 16, WY: 8, TM: 8, TN: 8, BK: 16, Double: true, Swizzle: true},
	tile128x64db:    {WX: 16, WY: 16, TM: 8, TN: 4, BK: 16, Double: true, Swizzle: true},
	tile64x64r8x4db: {WX: 16, WY: 8, TM: 8, TN: 4, BK: 16, Double: true, Swizzle: true},
	// 128×128 with a k step of 32 (a quarter of k8's barriers), one stage
	// (32 KiB), prefetched, swizzled.
	tile128x128k32: {WX: 16, WY: 16, TM: 8, TN: 8, BK: 32, Prefetch: true, Swizzle: true},
	// Warp-tiled variants (issue 15, session 8; untimed on a GPU when
	// added): warps of 8×4 invocations, after siboehm's SGEMM kernels 9
	// and 10 (a warp covers a compact sub-tile, so its shared-memory reads
	// are a few broadcast vec4s of a and one 128-byte row of b). 64×64
	// and 128×64 with 8×4 per invocation are the H200's winners of the
	// 15:28 and 20:58 runs, here warp-tiled with the next step prefetched
	// into registers; 128×128 with 8×8 per invocation two-staged (one
	// barrier per k step; unswizzled, since the swizzled two-stage 128×64
	// ran at 0.6× of the plain one) at k8 (16 KiB);
	// 64×64 with 4×4 per invocation (256 invocations, 16 accumulators:
	// light on registers, many warps per SM) for short K such as the
	// 64×256³ bmm, whose 1,024 workgroups are about 8 per SM.
	tile64x64r8x4w: {WX: 16, WY: 8, TM: 8, TN: 4, BK: 16, Prefetch: true, Warp: true},
	tile128x64w:    {WX: 16, WY: 16, TM: 8, TN: 4, BK: 16, Prefetch: true, Warp: true},
	tile128x128w:   {WX: 16, WY: 16, TM: 8, TN: 8, BK: 8, Double: true, Warp: true},
	tile64x64w:     {WX: 16, WY: 16, TM: 4, TN: 4, BK: 16, Prefetch: true, Warp: true},
}

// Indices of matmulTiles.
const (
	tile32x32 = iota
	tile64x64
	tile64x64r8x8
	tile64x64r8x4
	tile128x128
	tile32x64
	tile128x64
	tile128x128k16
	tile128x128db
	tile128x128db8
	tile64x128db
	tile128x64db
	tile64x64r8x4db
	tile128x128k32
	tile64x64r8x4w
	tile128x64w
	tile128x128w
	tile64x64w
)

// matmulOverride, when set, forces every MatMul onto one variant (tests,
// benchmarks, autotune).
var matmulOverride atomic.Pointer[matmulConfig]

// fits reports whether a tiled config runs on d: workgroup size and
// memory (both stages with Double) within the limits, tile loads that
// divide evenly, for Swizzle blocks of whole groups of 8 vec4s, and for
// Warp whole warps of 8×4 invocations.
func (d *Device) fits(c matmulConfig) bool {
	l := d.limits
	nt := c.WX * c.WY
	bm, bn := c.WY*c.TM, c.WX*c.TN
	stages := 1
	if c.Double {
		stages = 2
	}
	return c.TM%4 == 0 && c.TN%4 == 0 && c.BK%4 == 0 && c.BK > 0 &&
		nt <= int(l.MaxComputeInvocationsPerWorkgroup) && c.WX <= int(l.MaxComputeWorkgroupSizeX) &&
		c.WY <= int(l.MaxComputeWorkgroupSizeY) && stages*c.BK*(bm+bn)*4 <= int(l.MaxComputeWorkgroupStorageSize) &&
		c.BK*bm%(4*nt) == 0 && c.BK*bn%(4*nt) == 0 &&
		(!c.Swizzle || bm%32 == 0 && bn%32 == 0) &&
		(!c.Warp || c.WX%8 == 0 && c.WY%4 == 0 && nt%32 == 0)
}

// tiledChunk is the most K one workgroup of c walks: llvmpipe stops a
// shader's loops after 65,535 iterations, the K walk takes one per BK and
// unravel up to 8.
func tiledChunk(c matmulConfig) int { return 60000 * c.BK }

// tiledShader is the data of shaders/matmul_tiled.wgsl.
type tiledShader struct {
	WX, WY, TM, TN, BK, BM, BN int
	AK, BKFast, VecA, VecB     bool
	Src, Dst, Enable           string
	Split, Prefetch            bool
	Double, Swizzle, Warp      bool
	SwizzleStep                int
	RS, WS                     string
	KSw                        []int
	Epi                        string
	ABind, PBind               int
	ATile, BTile               int
	Ks, Rows4, Cols4           []int
	ALoads, BLoads             []int
	FMAs                       []tiledFMA
}

// tiledFMA is one accumulator: rows Row of the invocation's TM, column
// group Q; each k step adds a{A}.{C}·b{Q} to it.
type tiledFMA struct {
	Acc, Row, A, Q int
	C              string
}

func upTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func newTiledShader(c matmulConfig, src, dst string) tiledShader {
	sh := tiledShader{WX: c.WX, WY: c.WY, TM: c.TM, TN: c.TN, BK: c.BK, BM: c.WY * c.TM, BN: c.WX * c.TN,
		Src: src, Dst: dst, Enable: enableF16Types(src, dst), Prefetch: c.Prefetch && !c.Double,
		Double: c.Double, Swizzle: c.Swizzle, Warp: c.Warp}
	sh.ATile, sh.BTile = c.BK*sh.BM/4, c.BK*sh.BN/4
	sh.Ks, sh.Rows4, sh.Cols4 = upTo(c.BK), upTo(c.TM/4), upTo(c.TN/4)
	if c.Double {
		sh.RS, sh.WS = "[rs]", "[ws]"
	}
	sh.SwizzleStep = max(32/c.BK, 1)
	sh.KSw = make([]int, c.BK)
	if c.Swizzle {
		for kk := range sh.KSw {
			sh.KSw[kk] = kk / 4 * sh.SwizzleStep % 8
		}
	}
	for i := range c.TM {
		for q := range c.TN / 4 {
			sh.FMAs = append(sh.FMAs, tiledFMA{Acc: len(sh.FMAs), Row: i, A: i / 4, Q: q, C: "xyzw"[i%4 : i%4+1]})
		}
	}
	return sh
}

// bind sets the binding layout for an epilogue (nil: dst, a, b, params).
func (sh *tiledShader) bind(epi *epilogue) {
	var m matmulShader
	m.bind(epi)
	sh.Epi, sh.ABind, sh.PBind = m.Epi, m.ABind, m.PBind
}

// loads sets how operands are staged: one element or one vec4 per load.
func (sh *tiledShader) loads() {
	nt := sh.WX * sh.WY
	per := func(vec bool) int {
		if vec {
			return 4 * nt
		}
		return nt
	}
	sh.ALoads = upTo(sh.BK * sh.BM / per(sh.VecA))
	sh.BLoads = upTo(sh.BK * sh.BN / per(sh.VecB))
}

// vec4Ready reports whether an operand can be read as vec4s along its fast
// axis: stride 1 there, every other stride and the offset multiples of 4,
// and a binding of whole vec4s.
func (d *Device) vec4Ready(o operand, fast, other int, batch []int) bool {
	if o.Strides[fast] != 1 || o.Strides[other]%4 != 0 || o.Offset%4 != 0 || d.rt.BindSize(o.alloc)%16 != 0 {
		return false
	}
	for _, s := range batch {
		if s%4 != 0 {
			return false
		}
	}
	return true
}

// tiled records g with tiled config c in the given number of k slices.
func (g *gemm) tiled(c matmulConfig, splits int, epi *epilogue, s sink) error {
	d, out, x, y := g.d, g.out, g.x, g.y
	r := len(out.Shape)
	sh := newTiledShader(c, wgslType(x.DType), wgslType(out.DType))
	sh.AK = x.Strides[r-1] == 1
	sh.BKFast = y.Strides[r-2] == 1 && y.Strides[r-1] != 1
	if !c.NoVec {
		if sh.AK {
			sh.VecA = d.vec4Ready(x, r-1, r-2, g.batchStrides[0])
		} else {
			sh.VecA = d.vec4Ready(x, r-2, r-1, g.batchStrides[0])
		}
		if sh.BKFast {
			sh.VecB = d.vec4Ready(y, r-2, r-1, g.batchStrides[1])
		} else {
			sh.VecB = d.vec4Ready(y, r-1, r-2, g.batchStrides[1])
		}
	}
	sh.loads()
	gx, gy, gz, tilesY, err := g.grid(sh.BM, sh.BN, splits)
	if err != nil {
		return err
	}
	kSplit := ceilDiv(ceilDiv(g.k, splits), c.BK) * c.BK
	encode := func(k0, k1 int, beta float64) params {
		var p params
		p.epilogue(epi).u32(uint32(g.m)).u32(uint32(g.n)).u32(uint32(k0)).u32(uint32(k1)).
			u32(uint32(x.Offset)).u32(uint32(y.Offset)).u32(uint32(out.Offset)).u32(uint32(g.batch)).
			u32(uint32(x.Strides[r-2])).u32(uint32(x.Strides[r-1])).u32(uint32(y.Strides[r-2])).u32(uint32(y.Strides[r-1])).
			u32(uint32(tilesY)).u32(uint32(gz)).u32(uint32(len(g.batchShape))).u32(uint32(splits)).
			f32(float32(g.alpha)).f32(float32(beta)).u32(uint32(kSplit)).u32(0).
			vec8(g.batchShape, 1).vec8(g.batchStrides[0], 0).vec8(g.batchStrides[1], 0)
		return p
	}
	grid := dispatch{x: uint32(gx), y: uint32(gy), z: uint32(gz)}

	if splits == 1 {
		sh.bind(epi)
		kern, err := d.tiledKernel(sh, epi)
		if err != nil {
			return err
		}
		// Passes over chunks of K, only without an epilogue (see gemm.plan);
		// beta applies once. K = 0 takes one pass, which scales dst.
		chunk, beta := tiledChunk(c), g.beta
		kSplit = chunk
		for k0 := 0; k0 == 0 || k0 < g.k; k0 += chunk {
			dp := grid
			dp.k, dp.params = kern, encode(k0, min(k0+chunk, g.k), beta)
			dp.buffers = matmulBuffers(epi, out.alloc, x.alloc, y.alloc)
			s.record(dp)
			beta = 1
		}
		return nil
	}

	// Split-K: partial sums of each slice into a scratch buffer, then one
	// reduction that applies alpha, beta and the epilogue.
	total := g.batch * g.m * g.n
	// Apart from x and y: a deferred product's inputs may be back in the
	// pool by the time it is emitted (see scratchApart).
	scratch, err := scratchApart(s, int64(splits)*int64(total)*4, x.alloc, y.alloc)
	if err != nil {
		return fmt.Errorf("webgpu: %s: %s: split-K scratch: %w", hal.KernelMatMul, g.shapes, err)
	}
	// Freed after the dispatches that use it are posted: a later user of
	// the pooled buffer is recorded after them.
	defer s.free(scratch)
	part := scratch.(*device.Buffer).Allocation()
	sh.Split = true
	sh.bind(nil)
	kern, err := d.tiledKernel(sh, nil)
	if err != nil {
		return err
	}
	dp := grid
	dp.k, dp.params, dp.buffers = kern, encode(0, g.k, 0), []*device.Allocation{part, x.alloc, y.alloc}
	s.record(dp)

	// The sum applies alpha, beta and the epilogue (shared with the
	// split-K convolution).
	return recordSplitKSum(d, hal.KernelMatMul, out, part, total, splits, g.alpha, g.beta, epi, s)
}

// tiledKernel compiles (once) the tiled kernel sh describes.
func (d *Device) tiledKernel(sh tiledShader, epi *epilogue) (*device.Kernel, error) {
	storage, writable := 3, 1
	if epi != nil {
		storage, writable = len(epi.Outputs)+2+len(epi.Inputs), len(epi.Outputs)
	}
	// Double, Swizzle, Warp and Prefetch go after the BK (bench -profile
	// shows the name's first 60 characters): "matmul-tiled 16 16 8 8 16 db
	// sw wp pf …".
	name := fmt.Sprintf("matmul-tiled %d %d %d %d %d %s%s%s%s%v %v %v %v %s %s %v %v %d %d %s", sh.WX, sh.WY, sh.TM, sh.TN, sh.BK,
		map[bool]string{true: "db "}[sh.Double], map[bool]string{true: "sw "}[sh.Swizzle],
		map[bool]string{true: "wp "}[sh.Warp], map[bool]string{true: "pf "}[sh.Prefetch],
		sh.AK, sh.BKFast, sh.VecA, sh.VecB, sh.Src, sh.Dst, sh.Split, sh.Prefetch, sh.ABind, sh.PBind, epiKey(epi))
	return d.rt.Kernel(name, storage, writable, func() (string, error) { return render("matmul_tiled.wgsl", sh) })
}
