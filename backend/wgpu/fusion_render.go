//go:build cgo || (js && wasm)

package wgpu

import (
	"fmt"
	"math"
	"strconv"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/hal"
)

// Emission: a group (fusion.go) becomes one kernel in two steps. planFused
// lays it out, deciding the bindings, the uniform words and the statements
// as data (fusedPlan); shaders/fused.wgsl and shaders/fused_body.wgsl
// render that data into WGSL, like every other kernel family's template.
// The plan's key names the WGSL, so the templates run only for a kernel
// the device has not compiled yet.

// fusedPlan is a group laid out as one kernel: the template data of
// shaders/fused.wgsl (and its "fused_decls"), and what the dispatch binds
// and passes.
type fusedPlan struct {
	Enable        string // "enable f16;" or ""
	WorkgroupSize int
	Math, F16     bool // include "math" (and "math_f16")
	Epilogue      bool // a producer's epilogue, not a kernel of its own
	Outputs       []fusedArray
	Inputs        []fusedArray
	ParamsBinding int // the uniform's binding, standalone
	// Unravel: some load is strided, so i is unravelled into fz_c<k>
	// over the shape every strided load collapses to; Axes are its axes
	// but the first, last first.
	Unravel bool
	Axes    []fusedAxis
	Loads   []fusedLoad // x<k>, the external inputs
	Result  string      // an epilogue's r: the producer's v as it stores it
	Ops     []fusedStep // v<k>, in order
	Stores  []fusedStore
	// The contiguous path of a standalone kernel with no strided load:
	// Lanes elements per invocation (0: one, through fz_body), in vec4
	// buffers when Vec4 (see vectorize); Chunks and Idx are what the
	// template unrolls (elementwise_kernel.go's ewUnroll).
	Lanes       int
	Vec4        bool
	Chunks, Idx []int
	// Whole (with Vec4): the element count is a multiple of 4, so the
	// kernel stores whole vec4s only (see ewShader in elementwise_kernel.go).
	Whole bool
	// W is the WGSL of each uniform word the statements name by index:
	// the word itself, or past what an epilogue holds, its value as a
	// literal (spill).
	W []string

	buffers []*device.Allocation // outputs, then inputs
	outputs int
	words   []uint32
	consts  []int // indices of the words that hold constants the ops read
}

// fusedArray is a storage buffer binding, fz_o<k> or fz_i<k>.
type fusedArray struct {
	Binding    int
	Name, Type string
}

// fusedAxis is let fz_c<Coord> = fz_t % extent, with extent word Extent.
type fusedAxis struct{ Coord, Extent int }

// fusedLoad reads Array[offset + i], or through the strides of Terms.
type fusedLoad struct {
	Array   string
	Type    string // the element's WGSL type
	Offset  int    // word index
	Strided bool
	Terms   []fusedTerm // fz_c<Coord> * stride, for the nonzero strides
}

// fusedTerm is fz_c<Coord> * the word at Stride.
type fusedTerm struct{ Coord, Stride int }

// fusedStep is one op: var v<k>: Type = Value over its Args, with the
// constants cf and cu bound when it reads them. F and U are the word
// index of each lane, -1 for a lane the op does not read (the literal 0u).
type fusedStep struct {
	Type, Value string
	Args        []fusedArg
	Consts      bool
	F, U        [4]int
}

// fusedArg is let Name = Expr.
type fusedArg struct{ Name, Expr string }

// fusedStore is Array[offset + i] = Value.
type fusedStore struct {
	Array  string
	Type   string // the element's WGSL type
	Offset int    // word index
	Value  string
}

// word appends v to the words and returns its index.
func (p *fusedPlan) word(v int) int {
	p.words = append(p.words, uint32(v))
	return len(p.words) - 1
}

// constWord is word for a constant lane the op reads, and -1 (the literal
// 0u) for one it does not. A lane it reads stays a word even when zero: a
// constant divisor 0 would let the shader compiler fold x / 0 as it likes
// (llvmpipe makes it 0), where the uniform divides at run time into the
// ±Inf or NaN that IEEE and torch give.
func (p *fusedPlan) constWord(v uint32, read bool) int {
	if !read {
		return -1
	}
	p.consts = append(p.consts, len(p.words))
	return p.word(int(v))
}

// epilogueUniformWords is epilogueWords, lowered by tests to reach the
// literal fallback.
var epilogueUniformWords = epilogueWords

// wordNames and epilogueWordNames are the expressions of the uniform
// words, built once: a plan names a word per operand and constant, on
// every group.
var wordNames, epilogueWordNames = uniformWordNames("fz_params.w"), uniformWordNames("params.epi")

func uniformWordNames(array string) (names [fuseMaxWords]string) {
	for k := range names {
		names[k] = fmt.Sprintf("%s[%d][%d]", array, k/4, k%4)
	}
	return names
}

// spill sets W, fitting the words of an epilogue into the slots uniform
// words the producer keeps: the constants first (a literal zero divisor
// would be folded, see constWord), then the other words in order; what
// does not fit becomes a literal, and the kernel then serves only those
// values. words becomes what the producer passes.
func (p *fusedPlan) spill(slots int) {
	order := append([]int(nil), p.consts...)
	isConst := make([]bool, len(p.words))
	for _, k := range p.consts {
		isConst[k] = true
	}
	for k := range p.words {
		if !isConst[k] {
			order = append(order, k)
		}
	}
	p.W = make([]string, len(p.words))
	var passed []uint32
	for _, k := range order {
		if len(passed) < slots {
			p.W[k] = epilogueWordNames[len(passed)]
			passed = append(passed, p.words[k])
			continue
		}
		p.W[k] = strconv.FormatUint(uint64(p.words[k]), 10) + "u"
	}
	p.words = passed
}

// key names the WGSL the plan renders to: every field the templates read.
// It is built on every emission, so by appending, without fmt.
func (p *fusedPlan) key() string {
	b := make([]byte, 0, 128+64*(len(p.Loads)+2*len(p.Ops)+len(p.Stores)+len(p.W)/4))
	num := func(v int) { b = append(strconv.AppendInt(b, int64(v), 10), ' ') }
	str := func(v string) { b = append(append(b, v...), ' ') }
	flag := func(v bool) { b = append(strconv.AppendBool(b, v), ' ') }
	b = append(b, "fused "...)
	num(p.WorkgroupSize)
	flag(p.Math)
	flag(p.F16)
	flag(p.Epilogue)
	num(p.ParamsBinding)
	str(p.Enable)
	for _, arrays := range [2][]fusedArray{p.Outputs, p.Inputs} {
		b = append(b, "\nbind "...)
		for _, a := range arrays {
			num(a.Binding)
			str(a.Name)
			str(a.Type)
		}
	}
	b = append(b, "\nunravel "...)
	flag(p.Unravel)
	num(p.Lanes)
	flag(p.Vec4)
	flag(p.Whole)
	for _, a := range p.Axes {
		num(a.Coord)
		num(a.Extent)
	}
	for _, l := range p.Loads {
		b = append(b, "\nload "...)
		str(l.Array)
		num(l.Offset)
		flag(l.Strided)
		for _, t := range l.Terms {
			num(t.Coord)
			num(t.Stride)
		}
	}
	b = append(b, "\nr "...)
	str(p.Result)
	for _, op := range p.Ops {
		b = append(b, "\nop "...)
		str(op.Type)
		for _, a := range op.Args {
			str(a.Name)
			str(a.Expr)
		}
		flag(op.Consts)
		for _, w := range op.F {
			num(w)
		}
		for _, w := range op.U {
			num(w)
		}
		str(op.Value)
	}
	for _, st := range p.Stores {
		b = append(b, "\nstore "...)
		str(st.Array)
		num(st.Offset)
		str(st.Value)
	}
	b = append(b, "\nwords "...)
	for _, w := range p.W {
		str(w)
	}
	return string(b)
}

func itoa(k int) string { return strconv.Itoa(k) }

// planFused lays out g as one kernel of workgroup size wg. An epilogue
// keeps at most slots words in its producer's params; maxBindings bounds
// the storage buffers.
func planFused(g *fusedGroup, wg, slots, maxBindings int) (*fusedPlan, error) {
	p := &fusedPlan{
		Enable:        enableF16Types(boolType(g.f16)),
		WorkgroupSize: wg,
		Math:          g.f16,
		F16:           g.f16,
		Epilogue:      g.prod != nil,
	}
	for _, op := range g.ops {
		p.Math = p.Math || op.math
	}
	if !p.Epilogue {
		p.word(g.n) // words 0..3: n, row_stride, zero, (pad); see fused.wgsl
		p.word(0)
		p.word(0)
		p.word(0)
	}
	// Outputs first: their bindings come first.
	arrays := make(map[*device.Allocation]string, len(g.outs)+len(g.ins))
	for _, o := range g.outs {
		if o.live {
			name := "fz_o" + itoa(p.outputs)
			p.Outputs = append(p.Outputs, fusedArray{Binding: p.outputs, Name: name, Type: elemType(o.dtype)})
			arrays[o.alloc] = name
			p.buffers = append(p.buffers, o.alloc)
			p.outputs++
		}
	}
	skip := 0
	if p.Epilogue {
		skip = fuseSkip
	}
	for _, in := range g.ins {
		if _, ok := arrays[in.alloc]; ok {
			continue
		}
		name := "fz_i" + itoa(len(p.buffers)-p.outputs)
		p.Inputs = append(p.Inputs, fusedArray{Binding: len(p.buffers) + skip, Name: name, Type: elemType(in.view.DType)})
		arrays[in.alloc] = name
		p.buffers = append(p.buffers, in.alloc)
	}
	p.ParamsBinding = len(p.buffers)
	if len(p.buffers)+skip > maxBindings {
		return nil, fmt.Errorf("webgpu: fused kernel binds %d buffers, the limit is %d", len(p.buffers)+skip, maxBindings)
	}

	// Strided inputs: unravel i once over the shape all of them collapse
	// to, with the axes unrolled.
	var strides [][]int
	for _, in := range g.ins {
		if in.strided {
			strides = append(strides, in.view.Strides)
		}
	}
	var merged [][]int
	if len(strides) > 0 {
		var shape []int
		shape, merged = collapse(g.shape, strides...)
		p.Unravel = true
		for k := len(shape) - 1; k > 0; k-- {
			p.Axes = append(p.Axes, fusedAxis{Coord: k, Extent: p.word(shape[k])})
		}
	}
	p.Loads = make([]fusedLoad, 0, len(g.ins))
	s := 0
	for _, in := range g.ins {
		l := fusedLoad{Array: arrays[in.alloc], Type: elemType(in.view.DType), Offset: p.word(in.view.Offset), Strided: in.strided}
		if in.strided {
			for a, st := range merged[s] {
				if st != 0 {
					l.Terms = append(l.Terms, fusedTerm{Coord: a, Stride: p.word(st)})
				}
			}
			s++
		}
		p.Loads = append(p.Loads, l)
	}
	if p.Epilogue {
		p.Result = "v"
		if g.prod.out.DType == hal.Float16 {
			p.Result = "to_f16(v)"
		}
	}
	p.Ops = make([]fusedStep, len(g.ops))
	args := 0
	for _, op := range g.ops {
		args += len(op.args)
	}
	argBuf := make([]fusedArg, 0, args) // one allocation for every op's
	for k, op := range g.ops {
		st := &p.Ops[k]
		st.Type, st.Value, st.Consts = op.typ, op.value, op.consts
		for a, arg := range op.args {
			argBuf = append(argBuf, fusedArg{Name: operandNames[a], Expr: arg})
		}
		st.Args = argBuf[len(argBuf)-len(op.args) : len(argBuf) : len(argBuf)]
		if op.consts {
			// A lane the op does not read (most ops read one of the
			// eight) is a literal: the words are few enough for an
			// epilogue.
			for c := range 4 {
				st.F[c] = p.constWord(math.Float32bits(op.f[c]), op.lanes[0][c])
			}
			for c := range 4 {
				st.U[c] = p.constWord(op.u[c], op.lanes[1][c])
			}
		}
	}
	for _, o := range g.outs {
		if o.live {
			p.Stores = append(p.Stores, fusedStore{Array: arrays[o.alloc], Type: elemType(o.dtype), Offset: p.word(o.offset),
				Value: convert(o.value.name, o.value.typ, elemType(o.dtype))})
		}
	}

	if !p.Epilogue && !p.Unravel && ewContiguous {
		p.Lanes = ewDefaultLanes // emit sets the device's (setLanes)
		p.Chunks, p.Idx = ewUnroll(p.Lanes)
	}
	switch {
	case p.Epilogue && len(p.words) > slots:
		p.spill(slots)
	case p.Epilogue:
		p.W = epilogueWordNames[:len(p.words)]
	case len(p.words) > fuseMaxWords:
		return nil, fmt.Errorf("webgpu: fused kernel needs %d parameter words, the limit is %d", len(p.words), fuseMaxWords)
	default:
		p.W = wordNames[:len(p.words)]
	}
	return p, nil
}

// setLanes makes a plan on the contiguous path compute lanes (4 or 8)
// elements per invocation.
func (p *fusedPlan) setLanes(lanes int) {
	if p.Lanes > 0 {
		p.Lanes = lanes
		p.Chunks, p.Idx = ewUnroll(lanes)
	}
}

// vectorize turns a plan on the contiguous path into its vec4 variant
// when every load and store starts on a vec4 and bindable accepts the
// buffers (see Device.vec4Bindable), and reports whether it did.
func (p *fusedPlan) vectorize(bindable func(buffers []*device.Allocation) bool) bool {
	if p.Lanes == 0 || !bindable(p.buffers) {
		return false
	}
	offsets := make([]int, 0, len(p.Loads)+len(p.Stores))
	for _, l := range p.Loads {
		offsets = append(offsets, l.Offset)
	}
	for _, st := range p.Stores {
		offsets = append(offsets, st.Offset)
	}
	for _, k := range offsets {
		if p.words[k]%4 != 0 {
			return false
		}
	}
	for _, k := range offsets {
		p.words[k] /= 4 // in vec4 units
	}
	p.Vec4 = true
	p.Whole = p.words[0]%4 == 0 // word 0 is the element count
	for _, arrays := range [2][]fusedArray{p.Outputs, p.Inputs} {
		for k := range arrays {
			arrays[k].Type = "vec4<" + arrays[k].Type + ">"
		}
	}
	return true
}

// literalOffsets writes the offset words that are 0 as the literal 0u:
// every store's, and a load's whose buffer no other load reads (two
// loads of one buffer keep their words, so that fast-math cannot prove
// them equal: see fused.wgsl). A standalone kernel then indexes such a
// buffer with no uniform load and add, which costs llvmpipe about 2% of a
// streaming op's bandwidth; the key names the literals, so the kernel
// serves only offsets that are 0 there.
func (p *fusedPlan) literalOffsets() {
	if p.Epilogue {
		return
	}
	w := append([]string(nil), p.W...)
	for k, l := range p.Loads {
		shared := false
		for m, o := range p.Loads {
			shared = shared || m != k && o.Array == l.Array
		}
		if !shared && p.words[l.Offset] == 0 {
			w[l.Offset] = "0u"
		}
	}
	for _, st := range p.Stores {
		if p.words[st.Offset] == 0 {
			w[st.Offset] = "0u"
		}
	}
	p.W = w
}

// emit records g as one kernel: the producer with an epilogue, or a
// standalone elementwise kernel.
func (f *fuser) emit(g *fusedGroup) error {
	d := f.d
	live := 0
	for _, o := range g.outs {
		if o.live {
			live++
		}
	}
	if live == 0 {
		return nil // every result was freed unread
	}
	if g.prod != nil && len(g.ops) == 0 {
		return runProducer(g, d, nil)
	}
	p, err := planFused(g, d.workgroupSize(), epilogueUniformWords, d.maxFusedBindings())
	if err != nil {
		return err
	}
	if p.Epilogue {
		return runProducer(g, d, f.epilogueOf(p))
	}
	p.setLanes(d.ewLanes)
	p.vectorize(func(buffers []*device.Allocation) bool { return d.vec4Bindable(buffers, nil) })
	p.literalOffsets()
	k, err := d.rt.Kernel(p.key(), len(p.buffers), p.outputs, func() (string, error) {
		return render("fused.wgsl", p)
	})
	if err != nil {
		return err
	}
	wg := d.workgroupSize()
	perGroup := wg * max(p.Lanes, 1)
	x, y, err := d.grid((g.n + perGroup - 1) / perGroup)
	if err != nil {
		return fmt.Errorf("webgpu: fused kernel of %d elements: %w", g.n, err)
	}
	p.words[1] = x * uint32(wg)
	var params params
	for _, w := range p.words {
		params.u32(w)
	}
	d.post(dispatch{k: k, buffers: p.buffers, params: params, x: x, y: y, z: 1})
	return nil
}

// epilogueOf renders the epilogue of a producer group, reusing the Decls
// of an earlier identical one.
func (f *fuser) epilogueOf(p *fusedPlan) *epilogue {
	key := p.key()
	epi := &epilogue{Key: key, Outputs: p.buffers[:p.outputs], Inputs: p.buffers[p.outputs:], Words: p.words}
	if decls, ok := f.decls[key]; ok {
		epi.Decls = decls
		return epi
	}
	decls, err := render("fused_decls", p)
	if err != nil {
		decls = "// " + err.Error() // fails the producer's compile, which reports it
	}
	if f.decls == nil || len(f.decls) > 1024 {
		f.decls = map[string]string{}
	}
	f.decls[key] = decls
	epi.Decls = decls
	return epi
}

// runProducer records g's producer on d with epi. The caller holds the
// fuser's lock and g is detached, so the producer records and frees
// directly.
func runProducer(g *fusedGroup, d *Device, epi *epilogue) error {
	return g.prod.run(epi, sink{d: d, direct: true})
}

// boolType is "f16" when f16 is set, for enableF16Types.
func boolType(f16 bool) string {
	if f16 {
		return "f16"
	}
	return ""
}
