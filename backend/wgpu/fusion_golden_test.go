//go:build cgo

package wgpu

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/backend/wgpu/internal/device"
	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

var updateFusedGolden = flag.Bool("update-fused", false, "rewrite testdata/fused/*.wgsl from the current renderer")

// fusedGoldenGroups are fused groups built without a device, one per shape
// of WGSL the renderer writes: contiguous and broadcast loads, in-place
// chains, constants read and not, float16, and producers' epilogues, one
// of them with more words than the producer keeps.
func fusedGoldenGroups() map[string]*fusedGroup {
	d := &Device{limits: &webgpu.Limits{MaxStorageBuffersPerShaderStage: 8}}
	f32 := func(shape []int, strides ...int) operand {
		v := hal.View{Shape: shape, DType: hal.Float32, Strides: strides}
		if strides == nil {
			v = hal.Contiguous(nil, hal.Float32, shape...)
		}
		return operand{View: v, alloc: &device.Allocation{}}
	}
	f16 := func(shape ...int) operand {
		o := f32(shape)
		o.DType = hal.Float16
		return o
	}
	at := func(o operand, offset int) operand {
		o.Offset = offset
		return o
	}
	binary := func(dst, x, y operand, value string) ewJob {
		typ, load := loadType(x.DType)
		return ewJob{dst: dst, dstTyp: typ, math: true, value: store(dst.DType, value),
			args: []ewArg{{o: x, typ: typ, load: load}, {o: y, typ: typ, load: load}}}
	}
	unary := func(dst, x operand, value string, f ...float32) ewJob {
		typ, load := loadType(x.DType)
		j := ewJob{dst: dst, dstTyp: typ, math: true, value: store(dst.DType, value),
			args: []ewArg{{o: x, typ: typ, load: load}}}
		copy(j.f[:], f)
		return j
	}
	build := func(g *fusedGroup, jobs ...ewJob) *fusedGroup {
		for _, j := range jobs {
			if !g.accepts(d, j) {
				panic("fusedGoldenGroups: a job the group refuses")
			}
			g.add(j)
		}
		return g
	}
	producer := func(out operand) *fusedGroup {
		g := newGroup(out.Shape)
		g.prod = &producer{out: out, value: ref{name: "r", typ: wgslType(out.DType)},
			inputs: []*device.Allocation{{}, {}}}
		g.f16 = out.DType == hal.Float16
		g.outs = append(g.outs, fusedOut{alloc: out.alloc, offset: out.Offset, dtype: out.DType, value: g.prod.value, live: true})
		g.words++
		return g
	}

	x, y, t := f32([]int{4, 6}), at(f32([]int{4, 6}), 8), f32([]int{4, 6})
	row := f32([]int{4, 6}, 0, 1)   // a row broadcast down the columns
	col := f32([]int{4, 6}, 1, 0)   // a column broadcast along the rows
	h, k := f16(4, 6), f16(4, 6)    // float16 operands
	out := at(f32([]int{4, 6}), 24) // a producer's result
	out16 := f16(4, 6)
	// 15 elements: the vec4 variants end in a partial vec4.
	xOdd, yOdd, tOdd := f32([]int{3, 5}), at(f32([]int{3, 5}), 16), f32([]int{3, 5})
	groups := map[string]*fusedGroup{
		"add":     build(newGroup(x.Shape), binary(t, x, y, binaryFloat[hal.Add])),
		"add-odd": build(newGroup(xOdd.Shape), binary(tOdd, xOdd, yOdd, binaryFloat[hal.Add])),
		"chain": build(newGroup(x.Shape),
			binary(t, x, y, binaryFloat[hal.Add]),
			binary(t, t, y, binaryFloat[hal.Mul]),
			unary(t, t, unaryFloat[hal.ReLU]),
			binary(t, t, x, binaryFloat[hal.Div])),
		"broadcast": build(newGroup(x.Shape),
			binary(t, x, row, binaryFloat[hal.Sub]),
			binary(t, t, col, binaryFloat[hal.Mul])),
		"consts": build(newGroup(x.Shape),
			unary(t, x, unaryFloat[hal.Clamp], -1, 2),
			unary(t, t, "a / params.f.x", 0)),
		"f16": build(newGroup(h.Shape),
			binary(k, h, h, binaryFloat[hal.Mul]),
			unary(k, k, unaryFloat[hal.Tanh])),
		"epilogue": build(producer(out),
			binary(t, out, row, binaryFloat[hal.Add]),
			unary(t, t, unaryFloat[hal.ReLU])),
		"epilogue-f16": build(producer(out16),
			unary(out16, out16, unaryFloat[hal.GELU])),
		"epilogue-consts": build(producer(out),
			binary(t, out, col, binaryFloat[hal.Add]),
			unary(t, t, unaryFloat[hal.LeakyReLU], 0.125),
			unary(t, t, unaryFloat[hal.Clamp], 0, 6)),
	}
	for _, name := range []string{"epilogue", "epilogue-consts"} {
		// Rendered with only two of the words in the producer's params.
		groups[name+"-spilled"] = groups[name]
	}
	for _, name := range []string{"add", "add-odd", "chain", "f16", "consts"} {
		// Vectorized: buffers of vec4.
		groups[name+"-vec4"] = groups[name]
	}
	for _, name := range []string{"add", "add-odd", "chain"} {
		// Eight lanes (two vec4s) per invocation (EWLanesEnv=8).
		groups[name+"-vec4-lanes8"] = groups[name]
	}
	return groups
}

// TestFusedKernelsRender renders fusedGoldenGroups and compares them with
// testdata/fused (rewrite them with -update-fused): the WGSL of a group
// must not change by accident; the -vec4 ones are the vectorized variant
// of the contiguous path, -lanes8 its two-vec4 variant.
func TestFusedKernelsRender(t *testing.T) {
	for name, g := range fusedGoldenGroups() {
		slots := epilogueWords
		if strings.HasSuffix(name, "-spilled") {
			slots = 2
		}
		src, words, err := renderFusedGroup(name, g, 64, slots)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := fmt.Sprintf("%s\n// words: %v\n", withoutMath(t, src, g), words)
		path := filepath.Join("testdata", "fused", name+".wgsl")
		if *updateFusedGolden {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s renders\n%s\nwant\n%s", name, got, want)
		}
	}
}

// withoutMath replaces in src the blocks of shaders/math.wgsl that a
// kernel includes by a line naming them, so that the goldens hold what the
// fused renderer writes and not ten copies of math.wgsl.
func withoutMath(t *testing.T, src string, g *fusedGroup) string {
	t.Helper()
	for _, block := range []string{"math_f16", "math"} {
		text, err := render(block, g)
		if err != nil {
			t.Fatal(err)
		}
		src = strings.Replace(src, text, "// {{template \""+block+"\"}} (shaders/math.wgsl)\n", 1)
	}
	return src
}

// planGolden plans g as emit would for the golden group name: with
// -lanes8 eight lanes per invocation, with -vec4 vectorized, offset words
// that are 0 written as literals.
func planGolden(name string, g *fusedGroup, wg, slots int) (*fusedPlan, error) {
	p, err := planFused(g, wg, slots, 8)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, "-lanes8") {
		p.setLanes(8)
	}
	if strings.Contains(name, "-vec4") && !p.vectorize(func([]*device.Allocation) bool { return true }) {
		return nil, fmt.Errorf("not vectorized")
	}
	p.literalOffsets()
	return p, nil
}

// renderFusedGroup plans and renders g as emit would, without a device:
// the module (standalone) or the epilogue's declarations, and the words.
func renderFusedGroup(name string, g *fusedGroup, wg, slots int) (string, []uint32, error) {
	p, err := planGolden(name, g, wg, slots)
	if err != nil {
		return "", nil, err
	}
	if p.Epilogue {
		src, err := render("fused_decls", p)
		return src, p.words, err
	}
	src, err := render("fused.wgsl", p)
	return src, p.words, err
}

// TestFusedPlanKey checks that a plan's key, which names its kernel in the
// cache, tells the golden groups apart exactly as their WGSL does, and
// that the words a standalone kernel takes at run time (offsets, here)
// stay out of it.
func TestFusedPlanKey(t *testing.T) {
	type planned struct{ key, src string }
	var all []planned
	for name, g := range fusedGoldenGroups() {
		slots := epilogueWords
		if strings.HasSuffix(name, "-spilled") {
			slots = 2
		}
		p, err := planGolden(name, g, 64, slots)
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := renderFusedGroup(name, g, 64, slots)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, planned{p.key(), src})
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if (a.key == b.key) != (a.src == b.src) {
				t.Errorf("keys equal %t, sources equal %t:\n%s\n%s", a.key == b.key, a.src == b.src, a.key, b.key)
			}
		}
	}

	g := fusedGoldenGroups()["chain"]
	p, err := planFused(g, 64, epilogueWords, 8)
	if err != nil {
		t.Fatal(err)
	}
	for k := range g.ins {
		g.ins[k].view.Offset += 100
	}
	for k := range g.outs {
		g.outs[k].offset += 100
	}
	q, err := planFused(g, 64, epilogueWords, 8)
	if err != nil {
		t.Fatal(err)
	}
	if p.key() != q.key() {
		t.Errorf("moving the operands changed the key:\n%s\n%s", p.key(), q.key())
	}
	if slices.Equal(p.words, q.words) {
		t.Errorf("moving the operands left the words %v", p.words)
	}
}
