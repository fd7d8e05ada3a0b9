//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// The elementwise family (Fill, Random, Copy, Unary, Binary, Where) runs one
// template, shaders/elementwise.wgsl: dst[i] = value(a[i], b[i], c[i]) for
// each row-major index i of dst's shape. What varies is rendered in: the
// storage types, which operands need their strides (the rest index
// offset + i directly), which buffer each operand is read from, and the
// WGSL expression of the value. A kernel compiles once per device for each
// combination that occurs.

// ewInput is a buffer the kernel reads, bound at Binding as in<Binding>.
type ewInput struct {
	Binding int
	Type    string
}

// ewRead is one operand: let Name = Load(Array[index]), of WGSL type Type.
type ewRead struct {
	Name    string
	Array   string
	Strided bool
	Slot    int    // its offset and strides in params: 1, 2, 3
	At      string // the offset added to a contiguous index, see atOffset
	Load    string
	Type    string
}

// EWLanesEnv names the environment variable that picks how many elements
// one invocation of the contiguous elementwise and fused paths computes,
// read when a device opens: "4" (the default) or "8". 4 is one vec4 load
// per operand and one vec4 store: on an H200, 132 SMs × 2048 resident
// invocations × 32 bytes in flight for a binary op is 8.6 MB, about three
// times the bandwidth × latency product (≈4.8 TB/s × 600 ns ≈ 2.9 MB), so
// one should be enough. 8 is two vec4s per operand, a workgroup size
// apart, both loads issued before the arithmetic: half the grid, twice
// the loads in flight per invocation, for GPUs where latency is not
// hidden with one. Which is faster is for a GPU to say (bench rows
// add, relu and copy at 4M and 16M, fusion off, under each value).
const EWLanesEnv = "WEBTENSOR_EW_LANES"

// ewDefaultLanes is the elements one invocation of the contiguous path
// computes unless EWLanesEnv says otherwise.
const ewDefaultLanes = 4

// ewLanesFromEnv returns the lanes EWLanesEnv asks for.
func ewLanesFromEnv() (int, error) {
	switch v := strings.TrimSpace(os.Getenv(EWLanesEnv)); v {
	case "":
		return ewDefaultLanes, nil
	case "4", "8":
		return strconv.Atoi(v)
	default:
		return 0, fmt.Errorf("webgpu: %s=%q: want 4 or 8 elements per invocation: %w", EWLanesEnv, v, hal.ErrInvalid)
	}
}

// ewUnroll returns what the contiguous path of lanes (4 or 8) elements
// per invocation unrolls: its vec4 chunks (0..lanes/4-1) and its lanes
// (0..lanes-1), shared slices.
func ewUnroll(lanes int) (chunks, idx []int) {
	if lanes == 8 {
		return ewChunks8, ewIdx8
	}
	return ewChunks4, ewIdx4
}

var (
	ewChunks4, ewIdx4 = countTo(1), countTo(4)
	ewChunks8, ewIdx8 = countTo(2), countTo(8)
)

// ewShader is the template data of shaders/elementwise.wgsl.
type ewShader struct {
	Enable        string
	WorkgroupSize int
	Math, Philox  bool
	DstType       string
	DstStrided    bool
	DstAt         string // dst's offset added to a contiguous index
	Inputs        []ewInput
	Reads         []ewRead
	Unravel       bool
	Value         string
	// The contiguous path (every operand dense): Lanes elements per
	// invocation, as vec4 when Vec4; Chunks and Idx are 0..Lanes/4-1 and
	// 0..Lanes-1, what the template unrolls.
	Lanes       int
	Vec4        bool
	Chunks, Idx []int
	// Whole (with Vec4): n is a multiple of 4, so the kernel stores whole
	// vec4s only and has no single-component tail, whose mere presence
	// slows llvmpipe's stores by 1.3×.
	Whole bool
}

// ewArg is an operand as a kernel reads it: the WGSL type its buffer is
// bound as, and the conversion applied on load ("f32" for float16 that
// computes in float32, "" for none).
type ewArg struct {
	o    operand
	typ  string
	load string
}

// ewJob is one elementwise launch.
type ewJob struct {
	op     string // the kernel key, for names and errors
	dst    operand
	dstTyp string
	args   []ewArg // a, b, c
	value  string  // WGSL expression of dst's element, of dstTyp
	math   bool    // value calls shaders/math.wgsl
	philox bool
	f      [4]float32 // params.f
	u      [4]uint32  // params.u
	// rebase adapts a value that depends on i (Fill, Random) to a piece
	// starting at linear index base (chunk_elementwise.go); windowed marks
	// such a piece, whose operands bind windows and never fuse.
	rebase   func(j *ewJob, base int64)
	windowed bool
}

var operandNames = [...]string{"a", "b", "c"}

// inArrays are the names of input bindings 1..3 (0 is dst).
var inArrays = [...]string{"", "in1", "in2", "in3"}

// run records the launch. The callers have validated the operands; run
// checks again only what binding them relies on.
func (j ewJob) run(d *Device) error {
	n := j.dst.Elements()
	if n == 0 {
		return nil
	}
	if !j.windowed && !d.withinBinding(j.operands()...) {
		return d.ewChunked(j) // beyond one binding: in pieces
	}
	if !j.windowed && d.fuse.offer(j) {
		return nil // recorded with its group; see fusion.go
	}
	strides := [][]int{j.dst.Strides}
	for _, a := range j.args {
		strides = append(strides, a.o.Strides)
	}
	shape, merged := collapse(j.dst.Shape, strides...)

	sh := ewShader{
		WorkgroupSize: d.workgroupSize(),
		Math:          j.math || j.philox,
		Philox:        j.philox,
		DstType:       j.dstTyp,
		DstStrided:    !denseOver(shape, merged[0]),
		Value:         j.value,
	}
	sh.Unravel = sh.DstStrided
	buffers := []*device.Allocation{j.dst.alloc}
	types := []string{j.dstTyp}
	type binding struct {
		alloc *device.Allocation
		typ   string
	}
	bound := map[binding]int{}
	for i, a := range j.args {
		r := ewRead{Name: operandNames[i], Slot: i + 1, Load: a.load, Type: a.typ, Strided: !denseOver(shape, merged[i+1])}
		if a.load != "" {
			r.Type = a.load
		}
		sh.Unravel = sh.Unravel || r.Strided
		if a.o.alloc == j.dst.alloc {
			// In place: WebGPU forbids binding a buffer writable and
			// read-only at once, so the operand reads dst itself.
			if !a.o.Same(j.dst.View) || a.typ != j.dstTyp {
				return fmt.Errorf("webgpu: %s: input %v overlaps dst %v without being the same view: %w", j.op, a.o.View, j.dst.View, hal.ErrInvalid)
			}
			r.Array = "dst"
		} else {
			key := binding{a.o.alloc, a.typ}
			b, ok := bound[key]
			if !ok {
				b = len(buffers)
				bound[key] = b
				buffers = append(buffers, a.o.alloc)
				sh.Inputs = append(sh.Inputs, ewInput{Binding: b, Type: a.typ})
				types = append(types, a.typ)
			}
			r.Array = inArrays[b]
		}
		sh.Reads = append(sh.Reads, r)
	}
	for _, t := range types {
		if t == "f16" {
			sh.Enable = "enable f16;"
		}
	}

	offsets := [4]int{j.dst.Offset}
	for i, a := range j.args {
		offsets[i+1] = a.o.Offset
	}
	wg := d.workgroupSize()
	perGroup := wg
	if !sh.Unravel && ewContiguous {
		sh.Lanes = d.ewLanes
		sh.Chunks, sh.Idx = ewUnroll(sh.Lanes)
		sh.Vec4 = !j.windowed && d.vec4Bindable(buffers, offsets[:len(j.args)+1])
		sh.Whole = sh.Vec4 && n%4 == 0
		if sh.Vec4 {
			for i := range offsets {
				offsets[i] /= 4 // in vec4 units
			}
		}
		perGroup = wg * sh.Lanes
	}
	if !sh.DstStrided {
		sh.DstAt = atOffset(0, offsets[0], false)
	}
	for i := range sh.Reads {
		if sh.Reads[i].Strided {
			continue // indexed through its strides
		}
		shared := false
		for k := range sh.Reads {
			shared = shared || k != i && sh.Reads[k].Array == sh.Reads[i].Array
		}
		sh.Reads[i].At = atOffset(i+1, offsets[i+1], shared)
	}
	k, err := d.ewKernel(j.op, sh, len(buffers))
	if err != nil {
		return err
	}
	x, y, err := d.grid((n + perGroup - 1) / perGroup)
	if err != nil {
		return fmt.Errorf("webgpu: %s of %d elements: %w", j.op, n, err)
	}
	var p params
	// n, rank, row_stride, and zero: the always-0 word math.wgsl hides
	// from the compiler to keep its error-compensating steps as written.
	p.u32(uint32(n)).u32(uint32(len(shape))).u32(x * uint32(wg)).u32(0)
	for _, o := range offsets {
		p.u32(uint32(o))
	}
	for _, v := range j.f {
		p.f32(v)
	}
	for _, v := range j.u {
		p.u32(v)
	}
	p.vec8(shape, 1)
	for i := range 4 {
		if i < len(merged) {
			p.vec8(merged[i], 0)
		} else {
			p.vec8(nil, 0)
		}
	}
	d.record(dispatch{k: k, buffers: buffers, params: p, x: x, y: y, z: 1})
	return nil
}

// atOffset is what the kernel adds to a contiguous index into the
// operand in params slot: nothing for offset 0, unless the operand's
// buffer is shared with another operand (fast-math may fold two loads it
// can prove equal: see elementwise.wgsl), else the slot's offset word.
func atOffset(slot, offset int, shared bool) string {
	if offset == 0 && !shared {
		return ""
	}
	return "params.offsets[" + strconv.Itoa(slot) + "] + "
}

// ewContiguous turns the contiguous path on; tests turn it off to
// compare it with the general path.
var ewContiguous = true

func countTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// vec4Bindable reports whether buffers can be bound as arrays of vec4
// (every binding a whole number of 16 bytes, so that the last vec4 is
// in range) and operands at offsets start on a vec4.
func (d *Device) vec4Bindable(buffers []*device.Allocation, offsets []int) bool {
	for _, o := range offsets {
		if o%4 != 0 {
			return false
		}
	}
	for _, b := range buffers {
		if d.rt.BindSize(b)%16 != 0 || b.Base()%16 != 0 {
			return false
		}
	}
	return true
}

// ewKey is everything ewKernelName formats, comparable: a map key built
// without allocating.
type ewKey struct {
	op, value, dst string
	dstStrided     bool
	dstAt          string
	math, philox   bool
	wg             int
	reads          [len(operandNames)]ewRead
	inputs         [len(operandNames)]ewInput
	nReads, nIn    int
	lanes          int
	vec4, whole    bool
}

// ewKernel returns the kernel of sh, compiling it on first use.
func (d *Device) ewKernel(op string, sh ewShader, storage int) (*device.Kernel, error) {
	key := ewKey{op: op, value: sh.Value, dst: sh.DstType, dstStrided: sh.DstStrided, dstAt: sh.DstAt, math: sh.Math, philox: sh.Philox,
		wg: sh.WorkgroupSize, nReads: len(sh.Reads), nIn: len(sh.Inputs), lanes: sh.Lanes, vec4: sh.Vec4, whole: sh.Whole}
	copy(key.reads[:], sh.Reads)
	copy(key.inputs[:], sh.Inputs)
	if k, ok := d.ewCache.Load(key); ok {
		return k.(*device.Kernel), nil
	}
	k, err := d.rt.Kernel(ewKernelName(op, sh), storage, 1, func() (string, error) {
		return render("elementwise.wgsl", sh)
	})
	if err == nil {
		d.ewCache.Store(key, k)
	}
	return k, err
}

// ewKernelName identifies a rendered elementwise kernel by everything
// its template data holds, cheaply: it is built on every call.
func ewKernelName(op string, sh ewShader) string {
	var b strings.Builder
	b.Grow(128)
	b.WriteString(op)
	b.WriteString("(")
	for i, r := range sh.Reads {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(r.Name + ":" + r.Array)
		if r.Load != "" {
			b.WriteString(":" + r.Load)
		}
		if r.Strided {
			b.WriteString(":strided")
		} else if r.At == "" {
			b.WriteString(":at0")
		}
	}
	b.WriteString(" -> " + sh.DstType)
	if sh.DstStrided {
		b.WriteString(":strided")
	} else if sh.DstAt == "" {
		b.WriteString(":at0")
	}
	b.WriteString(") in")
	for _, in := range sh.Inputs {
		b.WriteString(" " + strconv.Itoa(in.Binding) + ":" + in.Type)
	}
	fmt.Fprintf(&b, " wg%d math=%t philox=%t", sh.WorkgroupSize, sh.Math, sh.Philox)
	if sh.Lanes > 0 {
		fmt.Fprintf(&b, " lanes=%d", sh.Lanes)
		if sh.Vec4 {
			b.WriteString(" vec4")
		}
		if sh.Whole {
			b.WriteString(" whole")
		}
	}
	b.WriteString(": " + sh.Value)
	return b.String()
}
