//go:build cgo

package wgpu

import (
	"bytes"
	"fmt"
	"sync"
	"text/template"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/shaders"
)

// kernel is a compiled pipeline and the number of storage buffers it binds.
type kernel struct {
	name     string
	pipeline webgpu.Pipeline
	storage  int
}

// templates holds the parsed WGSL templates of package shaders.
var templates = sync.OnceValues(func() (*template.Template, error) {
	return template.ParseFS(shaders.FS, "*.wgsl")
})

// render instantiates a WGSL template.
func render(file string, data any) (string, error) {
	t, err := templates()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, file, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Elementwise expressions of a (and b). ReLU keeps NaN (NaN < 0 is false),
// as PyTorch does. Sigmoid evaluates exp only of −|a|, so no intermediate
// overflows for any input.
var (
	binaryExpr = map[hal.BinaryOp]string{
		hal.Add: "a + b",
		hal.Mul: "a * b",
	}
	unaryExpr = map[hal.UnaryOp]string{
		hal.ReLU:    "select(a, 0.0, a < 0.0)",
		hal.Sigmoid: "select(exp(-abs(a)) / (1.0 + exp(-abs(a))), 1.0 / (1.0 + exp(-abs(a))), a >= 0.0)",
	}
)

// kernels caches compiled kernels by name; compiled once per device.
type kernelCache struct {
	mu sync.Mutex
	m  map[string]*kernel
}

// kernel returns the named kernel, compiling source() on first use.
func (d *Device) kernel(name string, storage int, source func() (string, error)) (*kernel, error) {
	d.kernels.mu.Lock()
	defer d.kernels.mu.Unlock()
	if k, ok := d.kernels.m[name]; ok {
		return k, nil
	}
	src, err := source()
	if err != nil {
		return nil, fmt.Errorf("webgpu: rendering kernel %s: %w", name, err)
	}
	k, err := d.compile(name, src, storage)
	if err != nil {
		return nil, err
	}
	if d.kernels.m == nil {
		d.kernels.m = map[string]*kernel{}
	}
	d.kernels.m[name] = k
	return k, nil
}

// compile builds a pipeline from WGSL source on the worker.
func (d *Device) compile(name, src string, storage int) (*kernel, error) {
	var p webgpu.Pipeline
	var err error
	theWorker.run(func() { p, err = d.native.CreatePipeline(src, storage, paramsBytes) })
	if err != nil {
		return nil, fmt.Errorf("webgpu: kernel %s on %s: %w:\n%v", name, d.info.Name, hal.ErrShaderRejected, err)
	}
	return &kernel{name: name, pipeline: p, storage: storage}, nil
}

func (d *Device) workgroupSize() int {
	wg := 256
	wg = min(wg, int(d.limits.MaxComputeInvocationsPerWorkgroup), int(d.limits.MaxComputeWorkgroupSizeX))
	return max(wg, 1)
}

// grid spreads groups workgroups over x and y, each at most the device's
// per-dimension limit.
func (d *Device) grid(groups int) (x, y uint32, err error) {
	limit := int(d.limits.MaxComputeWorkgroupsPerDimension)
	gx := min(groups, limit)
	gy := (groups + gx - 1) / gx
	if gy > limit {
		return 0, 0, fmt.Errorf("%d workgroups exceed %d×%d: %w", groups, limit, limit, hal.ErrUnsupported)
	}
	return uint32(gx), uint32(gy), nil
}

// bindSize is the byte range to bind for n float32s: bindings cannot be
// empty and must be whole words.
func bindSize(n int) uint64 { return uint64(max(n, 1)) * 4 }

func (d *Device) checkBinding(op string, n int) error {
	if bindSize(n) > d.limits.MaxStorageBufferBindingSize {
		return fmt.Errorf("webgpu: %s: %d elements exceed the device's maxStorageBufferBindingSize of %d bytes: %w", op, n, d.limits.MaxStorageBufferBindingSize, hal.ErrUnsupported)
	}
	return nil
}

// operandSource says where each operand of an elementwise kernel is read
// from, so that a destination aliasing an input is bound once, read-write.
type operandSource struct {
	Inputs        []wgslInput
	A, B          string
	ParamsBinding int
}

type wgslInput struct {
	Name    string
	Binding int
}

// bindOperands dedupes the buffers of an elementwise kernel: dst, then each
// distinct input. It returns the buffers to bind and where a and b come from.
func bindOperands(dst *allocation, inputs ...*allocation) ([]*allocation, operandSource) {
	bound := []*allocation{dst}
	var src operandSource
	names := []string{"dst"}
	for i, in := range inputs {
		name := ""
		for j, b := range bound {
			if b == in {
				name = names[j]
			}
		}
		if name == "" {
			name = fmt.Sprintf("in%d", len(bound))
			src.Inputs = append(src.Inputs, wgslInput{Name: name, Binding: len(bound)})
			bound = append(bound, in)
			names = append(names, name)
		}
		if i == 0 {
			src.A = name
		} else {
			src.B = name
		}
	}
	src.ParamsBinding = len(bound)
	return bound, src
}

// elementwise validates and records an elementwise kernel: dst[i] =
// expr(inputs[0][i], inputs[1][i]) for i < n.
func (d *Device) elementwise(op, name, expr string, n int, dst hal.Buffer, inputs ...hal.Buffer) error {
	if n < 0 {
		return fmt.Errorf("webgpu: %s: negative length %d: %w", op, n, hal.ErrInvalid)
	}
	bd, err := d.own(op, dst, int64(n)*4)
	if err != nil {
		return err
	}
	ins := make([]*allocation, len(inputs))
	for i, hb := range inputs {
		b, err := d.own(op, hb, int64(n)*4)
		if err != nil {
			return err
		}
		ins[i] = b.alloc
	}
	if d.isClosed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", op, hal.ErrClosed)
	}
	if n == 0 {
		return nil
	}
	if err := d.checkBinding(op, n); err != nil {
		return err
	}
	bound, src := bindOperands(bd.alloc, ins...)
	sizes := make([]uint64, len(bound))
	for i := range sizes {
		sizes[i] = bindSize(n)
	}
	wg := d.workgroupSize()
	variant := fmt.Sprintf("%s/a=%s/b=%s", name, src.A, src.B)
	k, err := d.kernel(variant, len(bound), func() (string, error) {
		return render("elementwise.wgsl", map[string]any{
			"Inputs": src.Inputs, "A": src.A, "B": src.B, "ParamsBinding": src.ParamsBinding,
			"Expr": expr, "WorkgroupSize": wg,
		})
	})
	if err != nil {
		return err
	}
	x, y, err := d.grid((n + wg - 1) / wg)
	if err != nil {
		return fmt.Errorf("webgpu: %s of %d elements: %w", op, n, err)
	}
	params := [4]uint32{uint32(n), x * uint32(wg)}
	theWorker.post(func() { d.rec.dispatch(k, bound, sizes, params, x, y) })
	return nil
}

// Binary records dst[i] = a[i] op b[i].
func (d *Device) Binary(op hal.BinaryOp, dst, a, b hal.Buffer, n int) error {
	expr, ok := binaryExpr[op]
	if !ok {
		return fmt.Errorf("webgpu: %v: %w", op, hal.ErrUnsupported)
	}
	return d.elementwise(op.String(), "binary/"+op.String(), expr, n, dst, a, b)
}

// Unary records dst[i] = op(src[i]).
func (d *Device) Unary(op hal.UnaryOp, dst, src hal.Buffer, n int) error {
	expr, ok := unaryExpr[op]
	if !ok {
		return fmt.Errorf("webgpu: %v: %w", op, hal.ErrUnsupported)
	}
	return d.elementwise(op.String(), "unary/"+op.String(), expr, n, dst, src)
}

// maxSoftwareK bounds K on software adapters, whose shader loops stop
// silently after 65,535 iterations (see shaders/matmul.wgsl).
const maxSoftwareK = 61440

// matmulTile is the workgroup side of the matmul kernel: 16×16 invocations
// computing 64×64 outputs, or 8×8 on devices with small limits.
func (d *Device) matmulTile() int {
	const t = 16
	if int(d.limits.MaxComputeInvocationsPerWorkgroup) >= t*t && int(d.limits.MaxComputeWorkgroupSizeX) >= t &&
		int(d.limits.MaxComputeWorkgroupSizeY) >= t && int(d.limits.MaxComputeWorkgroupStorageSize) >= 2*t*t*16 {
		return t
	}
	return 8
}

// MatMul records dst[m×n] = a[m×k] · b[k×n].
func (d *Device) MatMul(dst, a, b hal.Buffer, m, k, n int) error {
	const op = "matmul"
	if m < 0 || k < 0 || n < 0 {
		return fmt.Errorf("webgpu: %s %d×%d×%d: negative dimension: %w", op, m, k, n, hal.ErrInvalid)
	}
	bd, err := d.own(op, dst, int64(m)*int64(n)*4)
	if err != nil {
		return err
	}
	ba, err := d.own(op, a, int64(m)*int64(k)*4)
	if err != nil {
		return err
	}
	bb, err := d.own(op, b, int64(k)*int64(n)*4)
	if err != nil {
		return err
	}
	if bd.alloc == ba.alloc || bd.alloc == bb.alloc {
		return fmt.Errorf("webgpu: %s: the destination must not alias an input: %w", op, hal.ErrInvalid)
	}
	if d.isClosed() {
		return fmt.Errorf("webgpu: %s on closed device: %w", op, hal.ErrClosed)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if d.info.Type == hal.AdapterCPU && k > maxSoftwareK {
		return fmt.Errorf("webgpu: %s with k=%d on software adapter %s (limit %d): %w", op, k, d.info.Name, maxSoftwareK, hal.ErrUnsupported)
	}
	for _, count := range []int{m * n, m * k, k * n} {
		if err := d.checkBinding(op, count); err != nil {
			return err
		}
	}
	tile := d.matmulTile()
	kern, err := d.kernel(fmt.Sprintf("matmul/%d", tile), 3, func() (string, error) {
		return render("matmul.wgsl", map[string]any{"Tile": tile, "TileSquared": tile * tile})
	})
	if err != nil {
		return err
	}
	block := 4 * tile
	gx, gy := (n+block-1)/block, (m+block-1)/block
	limit := int(d.limits.MaxComputeWorkgroupsPerDimension)
	if gx > limit || gy > limit {
		return fmt.Errorf("webgpu: %s %d×%d×%d needs %d×%d workgroups, limit %d: %w", op, m, k, n, gx, gy, limit, hal.ErrUnsupported)
	}
	allocs := []*allocation{bd.alloc, ba.alloc, bb.alloc}
	sizes := []uint64{bindSize(m * n), bindSize(m * k), bindSize(k * n)}
	params := [4]uint32{uint32(m), uint32(k), uint32(n)}
	theWorker.post(func() { d.rec.dispatch(kern, allocs, sizes, params, uint32(gx), uint32(gy)) })
	return nil
}
