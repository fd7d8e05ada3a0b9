//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// matmulTile is the workgroup side of the matmul kernel: 16×16 invocations
// computing 64×64 outputs, or 8×8 on devices whose limits are smaller.
func (d *Device) matmulTile() int {
	const t = 16
	l := d.limits
	if int(l.MaxComputeInvocationsPerWorkgroup) >= t*t && int(l.MaxComputeWorkgroupSizeX) >= t &&
		int(l.MaxComputeWorkgroupSizeY) >= t && int(l.MaxComputeWorkgroupStorageSize) >= 2*t*t*16 {
		return t
	}
	return 8
}

// matmulChunk is the most K one pass walks: the kernel spends
// (K/T)·(T+1) loop iterations per invocation, plus at most MaxRank in
// unravel, and llvmpipe stops a shader's loops after 65,535. Longer K takes
// several passes that accumulate into dst through beta (for float16, the
// running sum is rounded to float16 between passes: K beyond ~56,000 loses
// that much more).
func matmulChunk(tile int) int { return 60000 / (tile + 1) * tile }

// matmulShader is the data of shaders/matmul.wgsl.
type matmulShader struct {
	Tile, TileSquared int
	Src, Dst, Enable  string
	// Epi is the fusion epilogue's declarations (empty: the plain store);
	// ABind and PBind are the bindings of a and of the parameters.
	Epi          string
	ABind, PBind int
}

// bind sets the binding layout for an epilogue (nil: dst, a, b, params).
func (sh *matmulShader) bind(epi *epilogue) {
	sh.Epi, sh.ABind, sh.PBind = "", 1, 3
	if epi != nil {
		sh.Epi, sh.ABind = epi.Decls, len(epi.Outputs)
		sh.PBind = sh.ABind + 2 + len(epi.Inputs)
	}
}

// matmulBuffers lists a dispatch's buffers in the order of sh.bind.
func matmulBuffers(epi *epilogue, out *device.Allocation, inputs ...*device.Allocation) []*device.Allocation {
	if epi == nil {
		return append([]*device.Allocation{out}, inputs...)
	}
	bufs := append(slices.Clone(epi.Outputs), inputs...)
	return append(bufs, epi.Inputs...)
}

// epiKey names an epilogue in kernel cache names.
func epiKey(epi *epilogue) string {
	if epi == nil {
		return ""
	}
	return epi.Key
}

// grid is the workgroup grid for blocks of bm×bn outputs and splits k
// slices: (column blocks, row blocks × splits × batch groups, batch
// groups), batches beyond the z limit folding into y.
func (g *gemm) grid(bm, bn, splits int) (gx, gy, gz, tilesY int, err error) {
	limit := int(g.d.limits.MaxComputeWorkgroupsPerDimension)
	gx, tilesY = ceilDiv(g.n, bn), ceilDiv(g.m, bm)
	gz = min(g.batch, limit)
	gy = tilesY * splits * ceilDiv(g.batch, gz)
	if gx > limit || gy > limit {
		return 0, 0, 0, 0, fmt.Errorf("webgpu: %s: %s needs %d×%d×%d workgroups of %d×%d outputs, the device allows %d per dimension: %w",
			hal.KernelMatMul, g.shapes, gx, gy, gz, bm, bn, limit, hal.ErrUnsupported)
	}
	return gx, gy, gz, tilesY, nil
}

// classic records the 4×4-per-invocation kernel of shaders/matmul.wgsl,
// the only one before the tiled variants (kept as their baseline); fused
// (see gemm.plan) lets an epilogue join it.
func (g *gemm) classic(fused bool) error {
	d, out, x, y := g.d, g.out, g.x, g.y
	m, k, n, r := g.m, g.k, g.n, len(g.out.Shape)
	tile := d.matmulTile()
	gx, gy, gz, tilesY, err := g.grid(4*tile, 4*tile, 1)
	if err != nil {
		return err
	}
	batchShape, batchStrides, batch := g.batchShape, g.batchStrides, g.batch
	alpha := g.alpha
	var flags uint32
	if x.Strides[r-1] == 1 {
		flags |= 1 // a's k is its fast axis
	}
	if y.Strides[r-2] == 1 && y.Strides[r-1] != 1 {
		flags |= 2 // b is transposed: k is its fast axis
	}
	chunk := matmulChunk(tile)
	run := func(epi *epilogue, s sink) error {
		sh := matmulShader{Tile: tile, TileSquared: tile * tile, Src: wgslType(x.DType), Dst: wgslType(out.DType)}
		sh.Enable = enableF16Types(sh.Src)
		sh.bind(epi)
		storage := 3
		if epi != nil {
			storage = len(epi.Outputs) + 2 + len(epi.Inputs)
		}
		kern, err := d.rt.Kernel(fmt.Sprintf("matmul%+v", sh), storage, storage-2-inputsOf(epi), func() (string, error) {
			return render("matmul.wgsl", sh)
		})
		if err != nil {
			return err
		}
		// Passes over chunks of K; beta applies once, later passes add to
		// dst. K = 0 still takes one pass, which scales dst by beta. An
		// epilogue only comes with one pass (see below).
		beta := g.beta
		for k0 := 0; k0 == 0 || k0 < k; k0 += chunk {
			var p params
			p.epilogue(epi).u32(uint32(m)).u32(uint32(n)).u32(uint32(k0)).u32(uint32(min(k0+chunk, k))).
				u32(uint32(x.Offset)).u32(uint32(y.Offset)).u32(uint32(out.Offset)).u32(uint32(batch)).
				u32(uint32(x.Strides[r-2])).u32(uint32(x.Strides[r-1])).u32(uint32(y.Strides[r-2])).u32(uint32(y.Strides[r-1])).
				u32(uint32(tilesY)).u32(uint32(gz)).u32(uint32(len(batchShape))).u32(flags).
				f32(float32(alpha)).f32(float32(beta)).
				vec8(batchShape, 1).vec8(batchStrides[0], 0).vec8(batchStrides[1], 0)
			s.record(dispatch{k: kern, buffers: matmulBuffers(epi, out.alloc, x.alloc, y.alloc), params: p,
				x: uint32(gx), y: uint32(gy), z: uint32(gz)})
			beta = 1
		}
		return nil
	}
	if !fused {
		return run(nil, sink{d: d})
	}
	return g.produce(run)
}

// inputsOf is the number of extra read-only inputs an epilogue binds.
func inputsOf(epi *epilogue) int {
	if epi == nil {
		return 0
	}
	return len(epi.Inputs)
}

// matvec computes a product with one row or one column (M = 1 or N = 1)
// as a sum reduction of products: each output is a dot product of length K,
// spread over lanes and split into segments like any long row. The tiled
// kernel would fill only one row or column of its 64×64 blocks: on
// llvmpipe a 2048×2048 matrix-vector product took 400 ms that way, 20 ms
// this way.
func (d *Device) matvec(out, a, b operand, m, k, n int, alpha, beta float64) error {
	r := len(out.Shape)
	// u holds the vectors the outputs walk (rows of a, or columns of b),
	// v the one vector they all meet.
	u, v, uStep, uK, vK := a, b, a.Strides[r-2], a.Strides[r-1], b.Strides[r-2]
	length := m
	if n != 1 {
		u, v, uStep, uK, vK = b, a, b.Strides[r-1], b.Strides[r-2], a.Strides[r-1]
		length = n
	}
	shape := append(slices.Clone(out.Shape[:r-2]), length)
	uStrides := append(slices.Clone(u.Strides[:r-2]), uStep)
	vStrides := append(slices.Clone(v.Strides[:r-2]), 0)
	s := reduceSource{alloc: u.alloc, dtype: wgslType(u.DType), offset: u.Offset,
		alloc2: v.alloc, offset2: v.Offset, innerStride2: vK}
	var st [][]int
	s.outer, st = collapse(shape, uStrides, vStrides)
	s.outerStrides, s.outerStrides2 = st[0], st[1]
	s.inner, st = collapse([]int{k}, []int{uK})
	s.innerStrides = st[0]
	sh := d.newReduceShader(hal.Sum, u.DType)
	sh.Scale = true
	if err := d.reduceRows(sh, s, hal.View{Shape: shape}.Elements(), k, out, alpha, beta); err != nil {
		return fmt.Errorf("webgpu: %s: %v·%v → %v: %w", hal.KernelMatMul, a.View, b.View, out.View, err)
	}
	return nil
}
