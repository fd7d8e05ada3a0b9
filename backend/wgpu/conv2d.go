//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// conv2dShader is the data of shaders/conv2d.wgsl.
type conv2dShader struct {
	Tile, TileSquared int
	Src, Dst, Enable  string // Dst is Src
	// Epi is the fusion epilogue's declarations (empty: the plain store
	// into dst); SrcBind, WBind and PBind are the bindings of src, weight
	// and the parameters.
	Epi                   string
	SrcBind, WBind, PBind int
}

// Conv2D records dst = conv2d(src, weight) as one implicit-GEMM kernel per
// chunk of K: no unfolded copy of the input is made.
func (d *Device) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	pl, err := d.planConv2D(dst, src, weight, w, groups)
	if err != nil || pl == nil {
		return err
	}
	if pl.k > matmulChunk(pl.tile) {
		// Passes accumulate through dst, which an epilogue replaces.
		return pl.record(nil, sink{d: d})
	}
	return d.fuse.produce(pl.out, 1, 0, pl.record, pl.x, pl.wt)
}

// planConv2D validates a Conv2D call and plans its GEMM; a nil plan (and
// error) means an empty dst: nothing to do.
func (d *Device) planConv2D(dst, src, weight hal.View, w hal.Window, groups int) (*conv2dPlan, error) {
	const op = hal.KernelConv2D
	if err := d.open(op); err != nil {
		return nil, err
	}
	o, err := d.operands(op, dst, src, weight)
	if err != nil {
		return nil, err
	}
	out, x, wt := o[0], o[1], o[2]
	if err := sameDType(op, dst.DType, dst, src, weight); err != nil {
		return nil, err
	}
	if err := d.supports(op, dst.DType); err != nil {
		return nil, err
	}
	if err := contiguousDst(op, "dst", dst); err != nil {
		return nil, err
	}
	if err := independent(op, out, x, wt); err != nil {
		return nil, err
	}
	if err := rank4(op, "src", src); err != nil {
		return nil, err
	}
	if err := rank4(op, "weight", weight); err != nil {
		return nil, err
	}
	n, c, h, wd := src.Shape[0], src.Shape[1], src.Shape[2], src.Shape[3]
	if err := checkWindow(op, w, h, wd); err != nil {
		return nil, err
	}
	cout := weight.Shape[0]
	if groups < 1 || c%groups != 0 || cout%groups != 0 {
		return nil, fmt.Errorf("webgpu: %s: groups %d must be ≥ 1 and divide the channels of src %v and weight %v: %w",
			op, groups, src, weight, hal.ErrInvalid)
	}
	if err := shapeIs(op, "weight", weight, cout, c/groups, w.KH, w.KW); err != nil {
		return nil, err
	}
	if err := shapeIs(op, "dst", dst, n, cout, w.OutH, w.OutW); err != nil {
		return nil, err
	}
	if dst.Elements() == 0 {
		return nil, nil
	}

	pl := conv2dPlan{d: d, out: out, x: x, wt: wt, w: w, n: n, c: c, h: h, wd: wd, cout: cout, groups: groups}
	if err := pl.size(); err != nil {
		return nil, err
	}
	return &pl, nil
}

// conv2dPlan is one validated Conv2D and its GEMM geometry.
type conv2dPlan struct {
	d                 *Device
	out, x, wt        operand
	w                 hal.Window
	n, c, h, wd, cout int
	groups            int
	m, l, ncols, k    int // per group: M rows, N·L columns, K
	tile, gx, tilesY  int
}

// size works out the GEMM and its grid, refusing one the device cannot
// dispatch.
func (pl *conv2dPlan) size() error {
	pl.m, pl.l = pl.cout/pl.groups, pl.w.OutH*pl.w.OutW
	pl.ncols, pl.k = pl.n*pl.l, pl.c/pl.groups*pl.w.KH*pl.w.KW
	pl.tile = pl.d.matmulTile() // the same workgroup as MatMul's
	block := 4 * pl.tile
	limit := int(pl.d.limits.MaxComputeWorkgroupsPerDimension)
	pl.gx, pl.tilesY = ceilDiv(pl.ncols, block), ceilDiv(pl.m, block)
	if pl.gx > limit || pl.tilesY*pl.groups > limit {
		return fmt.Errorf("webgpu: %s: %v with weight %v needs %d×%d workgroups of %d×%d outputs, the device allows %d per dimension: %w",
			hal.KernelConv2D, pl.x.View, pl.wt.View, pl.gx, pl.tilesY*pl.groups, block, block, limit, hal.ErrUnsupported)
	}
	return nil
}

// record records the kernel, storing into dst (epi nil) or through epi,
// in passes over chunks of K: the first overwrites dst, later ones add to
// it. No input channels still takes one pass, of zeros.
func (pl *conv2dPlan) record(epi *epilogue, s sink) error {
	d, w := pl.d, pl.w
	sh := conv2dShader{Tile: pl.tile, TileSquared: pl.tile * pl.tile, Src: wgslType(pl.out.DType)}
	sh.Dst, sh.Enable = sh.Src, enableF16Types(sh.Src)
	storage, writable := 3, 1
	buffers := []*device.Allocation{pl.out.alloc, pl.x.alloc, pl.wt.alloc}
	key := ""
	if epi != nil {
		sh.Epi, key = epi.Decls, epi.Key
		writable = len(epi.Outputs)
		storage = writable + 2 + len(epi.Inputs)
		buffers = slices.Concat(epi.Outputs, []*device.Allocation{pl.x.alloc, pl.wt.alloc}, epi.Inputs)
	}
	sh.SrcBind, sh.WBind, sh.PBind = writable, writable+1, storage
	name := fmt.Sprintf("conv2d/%d/%s/%s", pl.tile, sh.Src, key)
	kern, err := d.rt.Kernel(name, storage, writable, func() (string, error) {
		return render("conv2d.wgsl", sh)
	})
	if err != nil {
		return err
	}
	// (K/T)·(T+1) iterations of the K loop plus 24 of the column setup and
	// the store per pass, under llvmpipe's 65,535 as MatMul's.
	chunk := matmulChunk(pl.tile)
	beta := 0.0
	for k0 := 0; k0 == 0 || k0 < pl.k; k0 += chunk {
		var p params
		p.epilogue(epi).u32(uint32(pl.m)).u32(uint32(pl.ncols)).u32(uint32(k0)).u32(uint32(min(k0+chunk, pl.k))).
			u32(uint32(pl.cout)).u32(uint32(pl.l)).u32(uint32(pl.tilesY)).
			windowParams(pl.c/pl.groups, pl.h, pl.wd, w).
			u32(uint32(pl.x.Offset)).u32(uint32(pl.wt.Offset)).u32(uint32(pl.out.Offset)).
			f32(1).f32(float32(beta)).
			vec4(pl.x.Strides).vec4(pl.wt.Strides)
		s.record(dispatch{k: kern, buffers: buffers, params: p, x: uint32(pl.gx), y: uint32(pl.tilesY * pl.groups), z: 1})
		beta = 1
	}
	return nil
}
