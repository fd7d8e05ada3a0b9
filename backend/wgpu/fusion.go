//go:build cgo || (js && wasm)

package wgpu

import (
	"github.com/webtensor/webtensor/backend/wgpu/internal/gpu"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Fusion: elementwise kernels are not recorded one by one. Each joins a
// pending group of the device, and a group runs as one generated kernel
// (planned in fusion_render.go, rendered by shaders/fused.wgsl and
// fused_body.wgsl) when something needs its results or it is full: a
// read, write or sync, a kernel that touches its buffers, an op that cannot
// join, or a size limit. A group may start with a producer (a GEMM or
// Conv2D with beta 0, see produce): its elementwise followers then become
// the producer's epilogue and the whole chain is one dispatch.
//
// Everything is validated when the op is called; only what a kernel
// compile or record reports can fail later, and that failure is reported
// by the next Read or Sync, like every asynchronous failure.
//
// Within a group every op has the same shape, a contiguous dst, and the
// kernel computes element i of all of them in one invocation: it loads
// the group's external inputs first, computes each op in order into a
// register, and stores each output that is still live last. This is exact
// only if invocation i touches no element another invocation writes:
//   - a group output is read back only through its own layout (same
//     buffer, offset, dtype, contiguous): the value comes from the
//     register, never from memory;
//   - a buffer the group reads (an external input, or a producer's input)
//     is written by a later op only through that same layout, so each
//     invocation reads the element it alone writes, before writing it;
//   - a buffer freed during the group may come back from the pool as an
//     unrelated tensor: it is written only with the layout of the output
//     it was, or of the loads the group makes from it (as above).
// Anything else flushes the group first.

// epilogue is WGSL spliced into a producer kernel (a GEMM variant or
// Conv2D) in place of its plain store, so that elementwise ops that follow
// the producer run in the same dispatch: fusion.go groups the ops,
// fusion_render.go plans the kernel, shaders/fused*.wgsl are its WGSL.
type epilogue struct {
	// Key identifies Decls for the kernel cache.
	Key string
	// Decls is WGSL at module scope. It declares the writable storage
	// buffers at bindings 0..len(Outputs)-1 and the read-only ones at
	// len(Outputs)+Skip onwards (Skip bindings are the producer's own
	// inputs), and defines fn epilogue(i: u32, v: f32). Its own names
	// start with fz_, except those of the "math" template it may include
	// (a producer with an epilogue must not include "math" or define
	// to_f16 itself).
	Decls string
	// Outputs are bound read-write at 0..; Inputs read-only after the
	// producer's inputs.
	Outputs, Inputs []*device.Allocation
	// Words are the values of Decls' params.epi words, which the producer
	// writes first in its params (params.epilogue); past the words it
	// keeps, Decls has the rest as literals (spillWords).
	Words []uint32
}

// fusionPlanner is fusion as the rest of the backend sees it: the
// elementwise family offers its launches, producers hand over their
// kernels, and the runtime tells it of every other dispatch, of freed
// buffers and of the points where recorded work must be complete. It
// gathers what it is offered into groups and records each group as one
// kernel: plan (planFused), then WGSL from the templates, then dispatch.
type fusionPlanner interface {
	// offer takes an elementwise launch into a group, or reports false:
	// the launch must run on its own.
	offer(j ewJob) bool
	// produce takes a producer kernel (see fuser.produce).
	produce(out operand, alpha, beta float64, run func(epi *epilogue, s sink) error, a, b operand) error
	// touch records the pending group first if dp depends on it.
	touch(dp dispatch)
	// freed is told that buffer a was freed, before the pool may hand it
	// out again.
	freed(a *device.Allocation)
	// flush records the pending group.
	flush()
	// quiesce records the pending group and calls fn while no new group
	// can start, so that fn may release pooled buffers no group names.
	quiesce(fn func())
	// setEnabled turns grouping off (false) and on, for tests of the
	// kernels one op records on its own.
	setEnabled(on bool)
}

var _ fusionPlanner = (*fuser)(nil)

// Limits of one group.
const (
	fuseMaxOps   = 24 // ops after the producer: bounds the shader's size
	fuseHeader   = 12 // uniform words: n, rank, row_stride, zero, shape[8]
	fuseMaxWords = device.ParamsBytes / 4
	fuseSkip     = 2 // producer inputs when the producer does not name them
)

// fusionEnabled is false when WEBTENSOR_FUSION=0, for A/B benchmarks and
// debugging.
var fusionEnabled = sync.OnceValue(func() bool { return os.Getenv("WEBTENSOR_FUSION") != "0" })

// fuser is the fusionPlanner of a device: its pending group.
type fuser struct {
	d *Device

	// mu guards g and is held for a whole emission, producer included, so
	// that another goroutine's record, Free or flush waits for the group
	// rather than slipping in before it (see sink).
	mu    sync.Mutex
	g     *fusedGroup
	decls map[string]string // rendered epilogues by Key
	off   atomic.Bool       // tests of the unfused kernels set it
}

func (f *fuser) setEnabled(on bool) {
	f.flush()
	f.off.Store(!on)
}

// sink is how a producer records its dispatches and allocates and frees
// its scratch.
// The engine runs a deferred producer holding f.mu with the group
// detached; the producer's own calls then skip the fusion checks, which
// would take the lock again and have no group to order against.
type sink struct {
	d      *Device
	direct bool // inside an emission
}

func (s sink) record(dp dispatch) {
	if !s.direct {
		s.d.fuse.touch(dp)
	}
	s.d.post(dp)
}

func (s sink) free(b hal.Buffer) {
	s.d.free(b, !s.direct)
}

func (s sink) alloc(size int64) (hal.Buffer, error) {
	return s.d.alloc(size, !s.direct)
}

// fusedGroup is the chain being collected.
type fusedGroup struct {
	shape []int
	n     int
	prod  *producer // nil: a pure elementwise chain
	ops   []fusedOp
	outs  []fusedOut   // one per buffer written
	ins   []fusedInput // external loads
	freed map[*device.Allocation]bool
	words int  // uniform words a standalone kernel needs, estimated
	f16   bool // some operand is float16
}

// producer is a group's first kernel, recorded only at emission.
type producer struct {
	out    operand
	run    func(epi *epilogue, s sink) error
	inputs []*device.Allocation // nil: unknown
	value  ref                  // epilogue's v, converted to out's storage type
}

// ref is a register of the fused kernel and its WGSL type.
type ref struct{ name, typ string }

// fusedOp is one elementwise op: let v<k> = value over its arguments.
type fusedOp struct {
	typ, value string
	args       []string   // WGSL expressions of a, b, c
	consts     bool       // value reads cf and cu
	lanes      [2][4]bool // which lanes of cf and cu value reads
	f          [4]float32
	u          [4]uint32
	math       bool
}

// fusedOut is a buffer the group writes: its last value, stored at
// offset + i unless the buffer was freed.
type fusedOut struct {
	alloc  *device.Allocation
	offset int
	dtype  hal.DType
	value  ref
	live   bool
}

// fusedInput is an external operand, loaded as x<k> at the kernel's start.
type fusedInput struct {
	alloc   *device.Allocation
	view    hal.View
	strided bool // not offset + i: loaded through its strides
}

// elemType is the WGSL type a buffer of dtype t is bound as in a fused
// kernel: one binding per buffer, so 4-byte dtypes all move as i32 bits
// (bitcast, exact) and float16 as f16.
func elemType(t hal.DType) string {
	if t == hal.Float16 {
		return "f16"
	}
	return "i32"
}

// convert turns a value of WGSL type from into type to: bits for 4-byte
// types, "" when f16 meets a 4-byte type (no such op reads it so).
func convert(expr, from, to string) string {
	switch {
	case from == to:
		return expr
	case from == "f16" || to == "f16":
		return ""
	}
	return "bitcast<" + to + ">(" + expr + ")"
}

// offer offers an elementwise launch to the pending group. It reports
// false when the launch must run on its own.
func (f *fuser) offer(j ewJob) bool {
	if !fusionEnabled() || f.off.Load() || j.philox || !j.dst.Contiguous() || j.dst.Elements() == 0 {
		return false
	}
	for _, a := range j.args {
		if a.o.alloc == j.dst.alloc && a.typ != j.dstTyp {
			return false // run reports it
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.g != nil && !f.g.accepts(f.d, j) {
		f.emitLocked()
	}
	if f.g == nil {
		f.g = newGroup(j.dst.Shape)
		if !f.g.accepts(f.d, j) {
			f.g = nil
			return false
		}
	}
	f.g.add(j)
	return true
}

func newGroup(shape []int) *fusedGroup {
	return &fusedGroup{shape: slices.Clone(shape), n: hal.View{Shape: shape}.Elements(),
		freed: map[*device.Allocation]bool{}, words: fuseHeader}
}

// out returns the output entry of buffer a, or nil.
func (g *fusedGroup) out(a *device.Allocation) *fusedOut {
	for k := range g.outs {
		if g.outs[k].alloc == a {
			return &g.outs[k]
		}
	}
	return nil
}

// sameLayout reports whether o addresses the group's element i at
// offset + i of a buffer of dtype t.
func (g *fusedGroup) sameLayout(o operand, offset int, t hal.DType) bool {
	return o.Offset == offset && o.DType == t && o.Contiguous() && slices.Equal(o.Shape, g.shape)
}

// readsOnly reports whether every external load of a is at offset + i
// with dtype t.
func (g *fusedGroup) readsOnly(a *device.Allocation, offset int, t hal.DType) bool {
	for _, in := range g.ins {
		if in.alloc == a && (in.strided || in.view.Offset != offset || in.view.DType != t) {
			return false
		}
	}
	return true
}

// producerInput reports whether the producer reads a (true when the
// producer did not say what it reads).
func (g *fusedGroup) producerInput(a *device.Allocation) bool {
	if g.prod == nil {
		return false
	}
	return g.prod.inputs == nil || slices.Contains(g.prod.inputs, a)
}

// elemSize is the byte size class of the dtypes a buffer is used with.
func elemSize(t hal.DType) int {
	if t == hal.Float16 {
		return 2
	}
	return 4
}

// accepts reports whether j can join the group under the rules at the top
// of this file and the size limits.
func (g *fusedGroup) accepts(d *Device, j ewJob) bool {
	if !slices.Equal(j.dst.Shape, g.shape) || len(g.ops) >= fuseMaxOps {
		return false
	}
	uses := map[*device.Allocation]hal.DType{}
	for _, o := range g.outs {
		uses[o.alloc] = o.dtype
	}
	for _, in := range g.ins {
		uses[in.alloc] = in.view.DType
	}
	words := g.words
	f16 := g.f16 || j.dst.DType == hal.Float16
	newBuffer := func(o operand) bool {
		t, seen := uses[o.alloc]
		if seen && elemSize(t) != elemSize(o.DType) {
			return false
		}
		uses[o.alloc] = o.DType
		return true
	}
	for _, a := range j.args {
		f16 = f16 || a.o.DType == hal.Float16
		if a.o.alloc == j.dst.alloc {
			continue // in place: checked with dst below
		}
		if out := g.out(a.o.alloc); out != nil {
			if !g.sameLayout(a.o, out.offset, out.dtype) {
				return false
			}
			continue
		}
		if !newBuffer(a.o) {
			return false
		}
		words++
		if !denseOver(g.shape, a.o.Strides) || !a.o.Contiguous() {
			words += hal.MaxRank
		}
	}
	if out := g.out(j.dst.alloc); out != nil {
		if out.offset != j.dst.Offset || out.dtype != j.dst.DType {
			return false
		}
	} else {
		// A buffer freed during the group and handed out again as dst
		// (a chain that releases each result) is only written through
		// the layout the group reads it with, if it reads it at all.
		if g.producerInput(j.dst.alloc) ||
			!g.readsOnly(j.dst.alloc, j.dst.Offset, j.dst.DType) || !newBuffer(j.dst) {
			return false
		}
		words++
	}
	if strings.Contains(j.value, "params.f") {
		words += 4
	}
	if strings.Contains(j.value, "params.u") {
		words += 4
	}
	if words > fuseMaxWords {
		return false
	}
	if g.prod != nil && f16 && g.prod.out.DType != hal.Float16 {
		return false // the producer's module may not enable f16
	}
	bindings := len(uses)
	if g.prod != nil {
		bindings += fuseSkip
		if g.prod.inputs != nil {
			bindings += len(g.prod.inputs) - fuseSkip
		}
	}
	return bindings <= d.maxFusedBindings()
}

// maxFusedBindings is the storage buffers one fused kernel may bind.
func (d *Device) maxFusedBindings() int {
	return min(device.MaxBindings, int(d.limits.MaxStorageBuffersPerShaderStage))
}

// operandRef is the expression of operand o as j reads it (type typ,
// then the load conversion). taken are the loads earlier operands of the
// same op read: o gets another (WGSL fast-math, see shaders/fused.wgsl).
func (g *fusedGroup) operandRef(o operand, typ, load string, taken []int) (expr string, k int) {
	k = -1
	if out := g.out(o.alloc); out != nil {
		expr = convert(out.value.name, out.value.typ, typ)
	} else {
		k = g.input(o, taken)
		expr = convert("x"+itoa(k), elemType(o.DType), typ)
	}
	if load != "" {
		expr = load + "(" + expr + ")"
	}
	return expr, k
}

// input returns the index of an external load of o other than those of
// taken, adding it.
func (g *fusedGroup) input(o operand, taken []int) int {
	strided := !o.Contiguous() || !slices.Equal(o.Shape, g.shape)
	for k, in := range g.ins {
		if in.alloc == o.alloc && in.view.Offset == o.Offset && in.view.DType == o.DType &&
			slices.Equal(in.view.Strides, o.Strides) && in.strided == strided && !slices.Contains(taken, k) {
			return k
		}
	}
	g.ins = append(g.ins, fusedInput{alloc: o.alloc, view: o.View, strided: strided})
	g.words++
	if strided {
		g.words += hal.MaxRank
	}
	return len(g.ins) - 1
}

// constsReplacer renames an op's uniform constants to the fused kernel's
// per-op locals.
var constsReplacer = strings.NewReplacer("params.f", "cf", "params.u", "cu")

// readLanes reports which lanes of the vec4 named v expr reads: those its
// swizzles name (v.x, v.zw), all four where it reads v whole or by index.
func readLanes(expr, v string) (lanes [4]bool) {
	for rest := expr; ; {
		k := strings.Index(rest, v)
		if k < 0 {
			return lanes
		}
		if k > 0 && isIdentChar(rest[k-1]) || k+len(v) < len(rest) && isIdentChar(rest[k+len(v)]) {
			rest = rest[k+len(v):]
			continue // part of a longer name
		}
		rest = rest[k+len(v):]
		if !strings.HasPrefix(rest, ".") {
			return [4]bool{true, true, true, true}
		}
		for j := 1; j < len(rest); j++ {
			c := strings.IndexByte("xyzw", rest[j])
			if c < 0 {
				c = strings.IndexByte("rgba", rest[j])
			}
			if c < 0 {
				break
			}
			lanes[c] = true
		}
	}
}

func isIdentChar(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// add appends j, which accepts has admitted.
func (g *fusedGroup) add(j ewJob) {
	op := fusedOp{typ: j.dstTyp, f: j.f, u: j.u, math: j.math}
	var taken []int
	for _, a := range j.args {
		expr, k := g.operandRef(a.o, a.typ, a.load, taken)
		if k >= 0 {
			taken = append(taken, k)
		} else if j.math && slices.Contains(op.args, expr) && (a.load == "f32" || a.load == "" && a.typ == "f32") {
			// A register read twice (y / y): through a value the
			// compiler cannot see, so that it cannot fold.
			expr = "opaque(" + expr + ")"
		}
		op.args = append(op.args, expr)
		g.f16 = g.f16 || a.o.DType == hal.Float16
	}
	g.f16 = g.f16 || j.dst.DType == hal.Float16
	op.value = j.value
	if strings.Contains(j.value, "params.") {
		op.value = constsReplacer.Replace(j.value)
	}
	if op.value != j.value {
		op.consts = true
		op.lanes = [2][4]bool{readLanes(op.value, "cf"), readLanes(op.value, "cu")}
		g.words += 8
	}
	v := ref{name: "v" + itoa(len(g.ops)), typ: j.dstTyp}
	g.ops = append(g.ops, op)
	if out := g.out(j.dst.alloc); out != nil {
		out.value, out.live = v, true
		return
	}
	g.outs = append(g.outs, fusedOut{alloc: j.dst.alloc, offset: j.dst.Offset, dtype: j.dst.DType, value: v, live: true})
	g.words++
}

// produce hands a producer kernel to the fusion engine. run records the
// producer with the epilogue it is given (nil: the plain store into out).
// With beta 0 the call is deferred, so that the elementwise ops that
// follow on out become its epilogue. a and b are what the producer
// reads (two operands, not a variadic list: through the interface a list
// would be allocated on every call).
func (f *fuser) produce(out operand, alpha, beta float64, run func(epi *epilogue, s sink) error, a, b operand) error {
	f.flush()
	if !fusionEnabled() || f.off.Load() || beta != 0 || !out.Contiguous() || out.Elements() == 0 {
		return run(nil, sink{d: f.d})
	}
	g := newGroup(out.Shape)
	g.prod = &producer{out: out, run: run, value: ref{name: "r", typ: wgslType(out.DType)}}
	g.prod.inputs = []*device.Allocation{a.alloc, b.alloc}
	g.f16 = out.DType == hal.Float16
	g.outs = append(g.outs, fusedOut{alloc: out.alloc, offset: out.Offset, dtype: out.DType, value: g.prod.value, live: true})
	g.words++
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.g != nil {
		f.emitLocked()
	}
	f.g = g
	return nil
}

// flush runs the pending group, if any.
func (f *fuser) flush() {
	f.withGroup(func(*fusedGroup) { f.emitLocked() })
}

// quiesce runs the pending group, if any, and calls fn holding f.mu.
func (f *fuser) quiesce(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.g != nil {
		f.emitLocked()
	}
	fn()
}

// withGroup calls fn with the pending group, if any, holding f.mu.
func (f *fuser) withGroup(fn func(g *fusedGroup)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.g != nil {
		fn(f.g)
	}
}

// touch runs the pending group before dp if dp touches what the group
// reads or writes; an independent dispatch goes first and the group stays
// open (the scalar a chain broadcasts is filled that way).
func (f *fuser) touch(dp dispatch) {
	f.withGroup(func(g *fusedGroup) {
		for k, a := range dp.buffers {
			a = a.Origin() // a window (chunk.go) stands for its buffer
			writes := k < dp.k.Writable()
			if g.out(a) != nil || g.freed[a] || writes && g.reads(a) {
				f.emitLocked()
				return
			}
		}
	})
}

// reads reports whether the group reads buffer a, or may.
func (g *fusedGroup) reads(a *device.Allocation) bool {
	if g.prod != nil && (g.prod.inputs == nil || slices.Contains(g.prod.inputs, a)) {
		return true
	}
	for _, in := range g.ins {
		if in.alloc == a {
			return true
		}
	}
	return false
}

// freed is told that buffer a was freed: its pending store is dropped,
// and the pool may hand a out again.
func (f *fuser) freed(a *device.Allocation) {
	f.withGroup(func(g *fusedGroup) {
		g.freed[a] = true
		if out := g.out(a); out != nil {
			out.live = false
		}
	})
}

// emitLocked records the pending group and clears it. Failures surface at
// the next Read or Sync. The caller holds f.mu.
func (f *fuser) emitLocked() {
	g := f.g
	f.g = nil
	if err := f.emit(g); err != nil {
		gpu.Post(func() { f.d.rt.Fail(err) })
	}
}
