//go:build cgo

package wgpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/hal"
)

// fusedShader is the data of shaders/fused.wgsl.
type fusedShader struct {
	Enable        string
	WorkgroupSize int
	Math, F16     bool
	Bindings      string // storage buffer declarations
	ParamsBinding int
	Body          string // statements of fz_body(i) / epilogue(i, v)
	Epilogue      bool
}

// fusedLayout is what an emission binds and the words it passes.
type fusedLayout struct {
	bindings strings.Builder
	buffers  []*allocation // outputs, then (after the skipped bindings) inputs
	outputs  int
	words    []uint32
	consts   []int // indices of the words that hold constants the ops read
	// epilogue: the words are the producer's params.epi (an epilogue has
	// no uniform block of its own), else fz_params.w of fused.wgsl.
	epilogue bool
}

// word appends v and returns the WGSL expression that reads it.
func (l *fusedLayout) word(v int) string {
	l.words = append(l.words, uint32(v))
	if l.epilogue {
		return epilogueWordNames[len(l.words)-1]
	}
	return wordNames[len(l.words)-1]
}

// epilogueUniformWords is epilogueWords, lowered by tests to reach the
// literal fallback.
var epilogueUniformWords = epilogueWords

// constWord is word for a constant lane the op reads, and the literal 0u
// for one it does not. A lane it reads stays a word even when zero: a
// constant divisor 0 would let the shader compiler fold x / 0 as it likes
// (llvmpipe makes it 0), where the uniform divides at run time into the
// ±Inf or NaN that IEEE and torch give.
func (l *fusedLayout) constWord(v uint32, read bool) string {
	if !read {
		return "0u"
	}
	l.consts = append(l.consts, len(l.words))
	return l.word(int(v))
}

// wordNames and epilogueWordNames are the expressions of the uniform
// words, built once: emit names a word per operand and constant, on
// every group.
var wordNames, epilogueWordNames = uniformWordNames("fz_params.w"), uniformWordNames("params.epi")

func uniformWordNames(array string) (names [fuseMaxWords]string) {
	for k := range names {
		names[k] = fmt.Sprintf("%s[%d][%d]", array, k/4, k%4)
	}
	return names
}

// spillWords fits the words of an epilogue into the slots uniform words
// the producer keeps: the constants first (a literal zero divisor would be
// folded, see constWord), then the other words in order; what does not
// fit becomes a literal in body, and the kernel then serves only those
// values. It returns the body and the words to pass.
func spillWords(body string, words []uint32, consts []int, slots int) (string, []uint32) {
	order := append([]int(nil), consts...)
	isConst := make([]bool, len(words))
	for _, k := range consts {
		isConst[k] = true
	}
	for k := range words {
		if !isConst[k] {
			order = append(order, k)
		}
	}
	var passed []uint32
	pairs := make([]string, 0, 2*len(words))
	for _, k := range order {
		to := strconv.FormatUint(uint64(words[k]), 10) + "u"
		if len(passed) < slots {
			to = epilogueWordNames[len(passed)]
			passed = append(passed, words[k])
		}
		pairs = append(pairs, epilogueWordNames[k], to)
	}
	return strings.NewReplacer(pairs...).Replace(body), passed
}

func itoa(k int) string { return strconv.Itoa(k) }

// emit records g as one kernel: the producer with an epilogue, or a
// standalone elementwise kernel.
func (d *Device) emit(g *fusedGroup) error {
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
		return d.runProducer(g, nil)
	}
	l := &fusedLayout{epilogue: g.prod != nil}
	useMath := g.f16
	for _, op := range g.ops {
		useMath = useMath || op.math
	}
	var body strings.Builder
	if !l.epilogue {
		l.word(g.n) // words 0..3: n, row_stride, zero, (pad); see fused.wgsl
		l.word(0)
		l.word(0)
		l.word(0)
	}
	// Outputs first: their bindings come first.
	arrays := map[*allocation]string{}
	for _, o := range g.outs {
		if o.live {
			name := "fz_o" + itoa(l.outputs)
			fmt.Fprintf(&l.bindings, "@group(0) @binding(%d) var<storage, read_write> %s: array<%s>;\n", l.outputs, name, elemType(o.dtype))
			arrays[o.alloc] = name
			l.buffers = append(l.buffers, o.alloc)
			l.outputs++
		}
	}
	skip := 0
	if g.prod != nil {
		skip = fuseSkip
	}
	for _, in := range g.ins {
		if _, ok := arrays[in.alloc]; ok {
			continue
		}
		name := "fz_i" + itoa(len(l.buffers)-l.outputs)
		fmt.Fprintf(&l.bindings, "@group(0) @binding(%d) var<storage, read> %s: array<%s>;\n", len(l.buffers)+skip, name, elemType(in.view.DType))
		arrays[in.alloc] = name
		l.buffers = append(l.buffers, in.alloc)
	}
	if len(l.buffers)+skip > d.maxFusedBindings() {
		return fmt.Errorf("webgpu: fused kernel binds %d buffers, the limit is %d", len(l.buffers)+skip, d.maxFusedBindings())
	}

	// Strided inputs: unravel i once over the shape all of them collapse
	// to, with the axes unrolled.
	var strides [][]int
	for _, in := range g.ins {
		if in.strided {
			strides = append(strides, in.view.Strides)
		}
	}
	var coords []string
	var merged [][]int
	if len(strides) > 0 {
		var shape []int
		shape, merged = collapse(g.shape, strides...)
		body.WriteString("    var fz_t = i;\n")
		coords = make([]string, len(shape))
		for k := len(shape) - 1; k >= 0; k-- {
			coords[k] = "fz_c" + itoa(k)
			if k == 0 {
				fmt.Fprintf(&body, "    let fz_c0 = fz_t;\n")
				break
			}
			w := l.word(shape[k])
			fmt.Fprintf(&body, "    let %s = fz_t %% %s;\n    fz_t = fz_t / %s;\n", coords[k], w, w)
		}
	}
	s := 0
	for k, in := range g.ins {
		idx := l.word(in.view.Offset)
		if in.strided {
			for a, st := range merged[s] {
				if st != 0 {
					idx += " + " + coords[a] + " * " + l.word(st)
				}
			}
			s++
		} else {
			idx += " + i"
		}
		body.WriteString("    let x" + itoa(k) + " = " + arrays[in.alloc] + "[" + idx + "];\n")
	}
	if g.prod != nil {
		v := "v"
		if g.prod.out.DType == hal.Float16 {
			v = "to_f16(v)"
		}
		fmt.Fprintf(&body, "    let r = %s;\n", v)
	}
	body.Grow(160 * len(g.ops))
	for k, op := range g.ops {
		v := "v" + itoa(k)
		body.WriteString("    var " + v + ": " + op.typ + ";\n    {\n")
		for a, arg := range op.args {
			body.WriteString("        let " + operandNames[a] + " = " + arg + ";\n")
		}
		if op.consts {
			// A lane the op does not read (most ops read one of the
			// eight) is a literal: the words are few enough for an
			// epilogue.
			var f, u [4]string
			for c := range 4 {
				f[c] = l.constWord(math.Float32bits(op.f[c]), op.lanes[0][c])
			}
			for c := range 4 {
				u[c] = l.constWord(op.u[c], op.lanes[1][c])
			}
			fmt.Fprintf(&body, "        let cf = bitcast<vec4<f32>>(vec4<u32>(%s));\n", strings.Join(f[:], ", "))
			fmt.Fprintf(&body, "        let cu = vec4<u32>(%s);\n", strings.Join(u[:], ", "))
		}
		body.WriteString("        " + v + " = " + op.value + ";\n    }\n")
	}
	for _, o := range g.outs {
		if o.live {
			body.WriteString("    " + arrays[o.alloc] + "[" + l.word(o.offset) + " + i] = " + convert(o.value.name, o.value.typ, elemType(o.dtype)) + ";\n")
		}
	}

	sh := fusedShader{
		Enable:        enableF16Types(boolType(g.f16)),
		WorkgroupSize: d.workgroupSize(),
		Math:          useMath,
		F16:           g.f16,
		Bindings:      l.bindings.String(),
		ParamsBinding: len(l.buffers),
		Body:          body.String(),
		Epilogue:      g.prod != nil,
	}
	if g.prod != nil {
		words := l.words
		if len(words) > epilogueUniformWords {
			sh.Body, words = spillWords(sh.Body, words, l.consts, epilogueUniformWords)
		}
		return d.runProducer(g, d.epilogueOf(sh, l, words))
	}
	if len(l.words) > fuseMaxWords {
		return fmt.Errorf("webgpu: fused kernel needs %d parameter words, the limit is %d", len(l.words), fuseMaxWords)
	}
	name := fmt.Sprintf("fused wg%d math=%t f16=%t\n%s%s", sh.WorkgroupSize, sh.Math, sh.F16, sh.Bindings, sh.Body)
	k, err := d.kernel(name, len(l.buffers), l.outputs, func() (string, error) {
		return render("fused.wgsl", sh)
	})
	if err != nil {
		return err
	}
	wg := d.workgroupSize()
	x, y, err := d.grid((g.n + wg - 1) / wg)
	if err != nil {
		return fmt.Errorf("webgpu: fused kernel of %d elements: %w", g.n, err)
	}
	l.words[1] = x * uint32(wg)
	var p params
	for _, w := range l.words {
		p.u32(w)
	}
	d.post(dispatch{k: k, buffers: l.buffers, params: p, x: x, y: y, z: 1})
	return nil
}

// epilogueOf renders the epilogue of a producer group, reusing the Decls
// of an earlier identical one.
func (d *Device) epilogueOf(sh fusedShader, l *fusedLayout, words []uint32) *epilogue {
	key := fmt.Sprintf("fz f16=%t math=%t\n%s%s", sh.F16, sh.Math, sh.Bindings, sh.Body)
	epi := &epilogue{Key: key, Outputs: l.buffers[:l.outputs], Inputs: l.buffers[l.outputs:], Words: words}
	if decls, ok := d.fuse.decls[key]; ok {
		epi.Decls = decls
		return epi
	}
	decls, err := render("fused_decls", sh)
	if err != nil {
		decls = "// " + err.Error() // fails the producer's compile, which reports it
	}
	if d.fuse.decls == nil || len(d.fuse.decls) > 1024 {
		d.fuse.decls = map[string]string{}
	}
	d.fuse.decls[key] = decls
	epi.Decls = decls
	return epi
}

// runProducer records g's producer with epi. The caller holds d.fuse.mu
// and g is detached, so the producer records and frees directly.
func (d *Device) runProducer(g *fusedGroup, epi *epilogue) error {
	return g.prod.run(epi, sink{d: d, direct: true})
}

// boolType is "f16" when f16 is set, for enableF16Types.
func boolType(f16 bool) string {
	if f16 {
		return "f16"
	}
	return ""
}
