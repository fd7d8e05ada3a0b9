//go:build cgo

package wgpu

import (
	"fmt"
	"slices"

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
}

// MatMul records dst = alpha·a·b + beta·dst over the last two axes.
func (d *Device) MatMul(dst, a, b hal.View, alpha, beta float64) error {
	const name = hal.KernelMatMul
	if d.isClosed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", name, hal.ErrClosed)
	}
	ops, err := d.operands(name, dst, a, b)
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
	m, k, n := out.Shape[r-2], x.Shape[r-1], out.Shape[r-1]
	if m == 1 || n == 1 {
		return d.matvec(out, x, y, m, k, n, alpha, beta)
	}
	batchShape, batchStrides := collapse(x.Shape[:r-2], x.Strides[:r-2], y.Strides[:r-2])
	batch := hal.View{Shape: batchShape}.Elements()

	tile := d.matmulTile()
	block := 4 * tile
	limit := int(d.limits.MaxComputeWorkgroupsPerDimension)
	gx, tilesY := ceilDiv(n, block), ceilDiv(m, block)
	gz := min(batch, limit)
	gy := tilesY * ceilDiv(batch, gz)
	if gx > limit || gy > limit {
		return fmt.Errorf("webgpu: %s: %s needs %d×%d×%d workgroups of %d×%d outputs, the device allows %d per dimension: %w",
			name, shapes, gx, gy, gz, block, block, limit, hal.ErrUnsupported)
	}

	sh := matmulShader{Tile: tile, TileSquared: tile * tile, Src: wgslType(x.DType), Dst: wgslType(out.DType)}
	sh.Enable = enableF16Types(sh.Src)
	kern, err := d.kernel(fmt.Sprintf("matmul%+v", sh), 3, 1, func() (string, error) {
		return render("matmul.wgsl", sh)
	})
	if err != nil {
		return err
	}
	var flags uint32
	if x.Strides[r-1] == 1 {
		flags |= 1 // a's k is its fast axis
	}
	if y.Strides[r-2] == 1 && y.Strides[r-1] != 1 {
		flags |= 2 // b is transposed: k is its fast axis
	}
	// Passes over chunks of K; beta applies once, later passes add to dst.
	// K = 0 still takes one pass, which scales dst by beta.
	chunk := matmulChunk(tile)
	for k0 := 0; k0 == 0 || k0 < k; k0 += chunk {
		var p params
		p.u32(uint32(m)).u32(uint32(n)).u32(uint32(k0)).u32(uint32(min(k0+chunk, k))).
			u32(uint32(x.Offset)).u32(uint32(y.Offset)).u32(uint32(out.Offset)).u32(uint32(batch)).
			u32(uint32(x.Strides[r-2])).u32(uint32(x.Strides[r-1])).u32(uint32(y.Strides[r-2])).u32(uint32(y.Strides[r-1])).
			u32(uint32(tilesY)).u32(uint32(gz)).u32(uint32(len(batchShape))).u32(flags).
			f32(float32(alpha)).f32(float32(beta)).
			vec8(batchShape, 1).vec8(batchStrides[0], 0).vec8(batchStrides[1], 0)
		d.record(dispatch{k: kern, buffers: []*allocation{out.alloc, x.alloc, y.alloc}, params: p,
			x: uint32(gx), y: uint32(gy), z: uint32(gz)})
		beta = 1
	}
	return nil
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
