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

// Conv2D records dst = conv2d(src, weight) as one implicit-GEMM kernel: no
// unfolded copy of the input is made (software adapters unfold and
// multiply instead: see conv2DViaGEMM). A GEMM with few output blocks and a
// long K (a weight gradient, graph's correlateOverBatch) runs in K slices
// side by side whose partial sums one more kernel adds (split-K);
// otherwise a K past one pass's limit takes passes over chunks of it.
func (d *Device) Conv2D(dst, src, weight hal.View, w hal.Window, groups int) error {
	pl, err := d.planConv2D(dst, src, weight, w, groups)
	if err != nil || pl == nil {
		return err
	}
	if lowered, err := d.conv2DViaGEMM(pl, dst, src, weight); lowered {
		return err
	}
	if pl.splits == 1 && pl.k > matmulChunk(pl.tile) {
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
	// splits is the number of K slices (1: none), kSplit the K of each.
	splits, kSplit int
}

// Split-K's aim: at least convWantBlocks workgroups on a GPU (about two
// per SM of a 132-SM one) or convWantBlocksCPU on a software adapter (a
// few cores: more slices only add partial sums to store and add), in
// slices of at least convMinSliceK, so that each slice's loop still
// amortises its setup and partial store.
const convWantBlocks, convWantBlocksCPU, convMinSliceK = 256, 16, 256

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
	pl.splits, pl.kSplit = pl.splitK(limit)
	return nil
}

// splitK chooses the K slices: enough for the workgroups Split-K aims at
// when the output has fewer blocks, and at least enough that no slice passes
// matmulChunk (llvmpipe's loop limit). One slice (none) when the partial
// sums, splits × dst in f32, would not fit one binding: K then takes
// passes.
func (pl *conv2dPlan) splitK(limit int) (splits, kSplit int) {
	chunk := matmulChunk(pl.tile)
	blocks, want := pl.gx*pl.tilesY*pl.groups, convWantBlocks
	if !pl.d.reduce.hardware {
		want = convWantBlocksCPU
	}
	splits = ceilDiv(pl.k, chunk)
	if blocks < want && pl.k >= 2*convMinSliceK {
		splits = max(splits, min(ceilDiv(want, blocks), pl.k/convMinSliceK))
	}
	if splits <= 1 {
		return 1, pl.k
	}
	kSplit = ceilDiv(ceilDiv(pl.k, splits), pl.tile) * pl.tile
	splits = ceilDiv(pl.k, kSplit)
	total := int64(pl.n) * int64(pl.cout) * int64(pl.l)
	bytes := int64(splits) * total * 4
	if splits > limit || bytes > int64(pl.d.limits.MaxStorageBufferBindingSize) || uint64(bytes) > pl.d.limits.MaxBufferSize {
		return 1, pl.k
	}
	return splits, kSplit
}

// record records the kernel, storing into dst (epi nil) or through epi:
// in K slices and their sum when pl.splits > 1, else in passes over chunks
// of K where the first overwrites dst and later ones add to it. No input
// channels still takes one pass, of zeros.
func (pl *conv2dPlan) record(epi *epilogue, s sink) error {
	if pl.splits > 1 {
		return pl.recordSplit(epi, s)
	}
	kern, buffers, err := pl.kernel(epi, wgslType(pl.out.DType), pl.out.alloc)
	if err != nil {
		return err
	}
	// (K/T)·(T+1) iterations of the K loop plus 24 of the column setup and
	// the store per pass, under llvmpipe's 65,535 as MatMul's.
	chunk := matmulChunk(pl.tile)
	beta := 0.0
	for k0 := 0; k0 == 0 || k0 < pl.k; k0 += chunk {
		k1 := min(k0+chunk, pl.k)
		s.record(dispatch{k: kern, buffers: buffers, params: pl.params(epi, k0, k1, k1-k0, pl.out.Offset, beta),
			x: uint32(pl.gx), y: uint32(pl.tilesY * pl.groups), z: 1})
		beta = 1
	}
	return nil
}

// recordSplit records the K slices into an f32 scratch [splits, N, Cout,
// OH, OW] and matmul_splitk.wgsl's sum of them into dst or through epi.
func (pl *conv2dPlan) recordSplit(epi *epilogue, s sink) error {
	total := pl.n * pl.cout * pl.l
	scratch, err := scratchApart(s, int64(pl.splits)*int64(total)*4, pl.x.alloc, pl.wt.alloc)
	if err != nil {
		return fmt.Errorf("webgpu: %s: %v with weight %v: split-K scratch: %w", hal.KernelConv2D, pl.x.View, pl.wt.View, err)
	}
	// Freed after the dispatches that use it are posted: a later user of
	// the pooled buffer is recorded after them.
	defer s.free(scratch)
	part := scratch.(*device.Buffer).Allocation()
	kern, buffers, err := pl.kernel(nil, "f32", part)
	if err != nil {
		return err
	}
	s.record(dispatch{k: kern, buffers: buffers, params: pl.params(nil, 0, pl.k, pl.kSplit, 0, 0),
		x: uint32(pl.gx), y: uint32(pl.tilesY * pl.groups), z: uint32(pl.splits)})
	return recordSplitKSum(pl.d, hal.KernelConv2D, pl.out, part, total, pl.splits, 1, 0, epi, s)
}

// scratchApart allocates size bytes through s in a buffer other than
// inputs. A deferred producer runs when its group is emitted, and by then
// its inputs may have been freed into the pool (the fusion engine keeps
// them pending, fuser.freed): a scratch taken from the pool could be one
// of them, bound writable beside itself read-only, which WebGPU refuses
// and which would overwrite the input. Such a buffer is held until the
// scratch is found and then freed again.
func scratchApart(s sink, size int64, inputs ...*device.Allocation) (hal.Buffer, error) {
	var held []hal.Buffer
	defer func() {
		for _, b := range held {
			s.free(b)
		}
	}()
	for range len(inputs) + 1 {
		b, err := s.alloc(size)
		if err != nil {
			return nil, err
		}
		if a := b.(*device.Buffer).Allocation(); !slices.ContainsFunc(inputs, func(in *device.Allocation) bool { return in.Origin() == a }) {
			return b, nil
		}
		held = append(held, b)
	}
	return nil, fmt.Errorf("webgpu: no scratch apart from %d inputs: %w", len(inputs), hal.ErrInvalid)
}

// kernel compiles (once) the kernel that stores as dstType into dst, or
// through epi, and lists its buffers.
func (pl *conv2dPlan) kernel(epi *epilogue, dstType string, dst *device.Allocation) (*device.Kernel, []*device.Allocation, error) {
	sh := conv2dShader{Tile: pl.tile, TileSquared: pl.tile * pl.tile, Src: wgslType(pl.out.DType), Dst: dstType}
	sh.Enable = enableF16Types(sh.Src, sh.Dst)
	storage, writable := 3, 1
	buffers := []*device.Allocation{dst, pl.x.alloc, pl.wt.alloc}
	key := ""
	if epi != nil {
		sh.Epi, key = epi.Decls, epi.Key
		writable = len(epi.Outputs)
		storage = writable + 2 + len(epi.Inputs)
		buffers = slices.Concat(epi.Outputs, []*device.Allocation{pl.x.alloc, pl.wt.alloc}, epi.Inputs)
	}
	sh.SrcBind, sh.WBind, sh.PBind = writable, writable+1, storage
	name := fmt.Sprintf("conv2d/%d/%s/%s/%s", pl.tile, sh.Src, sh.Dst, key)
	kern, err := pl.d.rt.Kernel(name, storage, writable, func() (string, error) {
		return render("conv2d.wgsl", sh)
	})
	return kern, buffers, err
}

// params encodes one dispatch over K range [k0, k1) in slices of kSplit,
// storing at dstOffset with beta.
func (pl *conv2dPlan) params(epi *epilogue, k0, k1, kSplit, dstOffset int, beta float64) params {
	var p params
	p.epilogue(epi).u32(uint32(pl.m)).u32(uint32(pl.ncols)).u32(uint32(k0)).u32(uint32(k1)).
		u32(uint32(pl.cout)).u32(uint32(pl.l)).u32(uint32(pl.tilesY)).
		windowParams(pl.c/pl.groups, pl.h, pl.wd, pl.w).
		u32(uint32(pl.x.Offset)).u32(uint32(pl.wt.Offset)).u32(uint32(dstOffset)).
		f32(1).f32(float32(beta)).
		vec4(pl.x.Strides).vec4(pl.wt.Strides).
		u32(uint32(max(kSplit, 1))).u32(uint32(pl.n * pl.cout * pl.l)).align(16)
	return p
}

// recordSplitKSum records matmul_splitk.wgsl: out = alpha·Σ_s part[s·total
// + i] + beta·out over the total outputs of a split-K product, or through
// epi (part is bound in the places of both producer inputs, so that the
// epilogue's inputs follow two, as for every GEMM).
func recordSplitKSum(d *Device, op string, out operand, part *device.Allocation, total, splits int, alpha, beta float64, epi *epilogue, s sink) error {
	rs := matmulShader{Dst: wgslType(out.DType), Tile: d.workgroupSize()}
	rs.Enable = enableF16Types(rs.Dst)
	rs.bind(epi)
	red, err := d.rt.Kernel(fmt.Sprintf("matmul-splitk%+v", rs), rs.PBind, rs.PBind-2-inputsOf(epi), func() (string, error) {
		return render("matmul_splitk.wgsl", rs)
	})
	if err != nil {
		return err
	}
	wx, wy, err := d.grid(ceilDiv(total, rs.Tile))
	if err != nil {
		return fmt.Errorf("webgpu: %s: split-K sum of %d outputs: %w", op, total, err)
	}
	var p params
	p.epilogue(epi).u32(uint32(total)).u32(uint32(splits)).u32(uint32(out.Offset)).u32(wx * uint32(rs.Tile)).
		f32(float32(alpha)).f32(float32(beta))
	s.record(dispatch{k: red, buffers: matmulBuffers(epi, out.alloc, part, part), params: p, x: wx, y: wy, z: 1})
	return nil
}
