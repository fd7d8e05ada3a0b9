package einsum

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// nd is a dense float64 array: the executor under test runs on it, and
// naive computes the same equation by looping over every label value.
type nd struct {
	shape []int
	data  []float64
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// each calls f with every multi-index of shape.
func each(shape []int, f func(idx []int)) {
	idx := make([]int, len(shape))
	n := prod(shape)
	for range n {
		f(idx)
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
}

func (a nd) at(idx []int) float64 {
	s := strides(a.shape)
	o := 0
	for k, i := range idx {
		o += i * s[k]
	}
	return a.data[o]
}

type ndOps struct{ matmuls *int }

func (ndOps) Shape(x nd) []int { return slices.Clone(x.shape) }
func (ndOps) Permute(x nd, perm []int) nd {
	shape := make([]int, len(perm))
	for k, p := range perm {
		shape[k] = x.shape[p]
	}
	out := nd{shape: shape}
	src := make([]int, len(perm))
	each(shape, func(idx []int) {
		for k, p := range perm {
			src[p] = idx[k]
		}
		out.data = append(out.data, x.at(src))
	})
	return out
}
func (ndOps) Reshape(x nd, shape []int) nd {
	if prod(shape) != len(x.data) {
		panic("bad reshape")
	}
	return nd{shape: slices.Clone(shape), data: slices.Clone(x.data)}
}
func (ndOps) Slice(x nd, dim, start, end, step int) nd {
	shape := slices.Clone(x.shape)
	shape[dim] = 0
	if end > start {
		shape[dim] = (end - start + step - 1) / step
	}
	out := nd{shape: shape}
	src := make([]int, len(shape))
	each(shape, func(idx []int) {
		copy(src, idx)
		src[dim] = start + idx[dim]*step
		out.data = append(out.data, x.at(src))
	})
	return out
}
func (ndOps) Sum(x nd, dims []int) nd {
	var shape []int
	for k, d := range x.shape {
		if !slices.Contains(dims, k) {
			shape = append(shape, d)
		}
	}
	out := nd{shape: shape, data: make([]float64, prod(shape))}
	s := strides(shape)
	each(x.shape, func(idx []int) {
		o, j := 0, 0
		for k, i := range idx {
			if !slices.Contains(dims, k) {
				o += i * s[j]
				j++
			}
		}
		out.data[o] += x.at(idx)
	})
	return out
}
func (o ndOps) MatMul(a, b nd) nd {
	*o.matmuls++
	B, M, K, N := a.shape[0], a.shape[1], a.shape[2], b.shape[2]
	if b.shape[0] != B || b.shape[1] != K {
		panic("bad matmul")
	}
	out := nd{shape: []int{B, M, N}, data: make([]float64, B*M*N)}
	for i := range B {
		for m := range M {
			for n := range N {
				var s float64
				for k := range K {
					s += a.data[(i*M+m)*K+k] * b.data[(i*K+k)*N+n]
				}
				out.data[(i*M+m)*N+n] = s
			}
		}
	}
	return out
}
func (ndOps) Release(nd) {}

// naive evaluates the plan by brute force over every label's values.
func naive(p *Plan, xs []nd) nd {
	var labels []int
	for l := range p.Sizes {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	sizes := make([]int, len(labels))
	for k, l := range labels {
		sizes[k] = p.Sizes[l]
	}
	var outShape []int
	for _, l := range p.Output {
		outShape = append(outShape, p.Sizes[l])
	}
	out := nd{shape: outShape, data: make([]float64, prod(outShape))}
	os := strides(outShape)
	each(sizes, func(val []int) {
		v := 1.0
		for i, x := range xs {
			idx := make([]int, len(p.Inputs[i]))
			for a, l := range p.Inputs[i] {
				if x.shape[a] != 1 {
					idx[a] = val[slices.Index(labels, l)]
				}
			}
			// A repeated label must take one value on both axes.
			v *= x.at(idx)
		}
		o := 0
		for k, l := range p.Output {
			o += val[slices.Index(labels, l)] * os[k]
		}
		out.data[o] += v
	})
	return out
}

func random(r *rand.Rand, shape ...int) nd {
	x := nd{shape: shape, data: make([]float64, prod(shape))}
	for i := range x.data {
		x.data[i] = r.Float64()*2 - 1
	}
	return x
}

func TestRunMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		eq     string
		shapes [][]int
		out    []int
	}{
		{"ij,jk->ik", [][]int{{3, 5}, {5, 2}}, []int{3, 2}},
		{"ij,jk", [][]int{{3, 5}, {5, 2}}, []int{3, 2}},
		{"ii->i", [][]int{{4, 4}}, []int{4}},
		{"ii", [][]int{{4, 4}}, []int{}},
		{"iji->j", [][]int{{3, 2, 3}}, []int{2}},
		{"ij->", [][]int{{3, 5}}, []int{}},
		{"ij->ji", [][]int{{3, 5}}, []int{5, 3}},
		{"bij,bjk->bik", [][]int{{2, 3, 4}, {2, 4, 5}}, []int{2, 3, 5}},
		{"...ij,...jk->...ik", [][]int{{2, 1, 3, 4}, {3, 4, 5}}, []int{2, 3, 3, 5}},
		{"...ij->ij", [][]int{{2, 3, 4}}, []int{3, 4}},
		{"bA,...", [][]int{{2, 3}, {5}}, []int{5, 3, 2}},
		{"i,i->", [][]int{{3}, {1}}, []int{}},
		{"i,j->ij", [][]int{{3}, {4}}, []int{3, 4}},
		{"ij,jk,kl->il", [][]int{{2, 7}, {7, 3}, {3, 5}}, []int{2, 5}},
		{"ab,bc,cd,de->ae", [][]int{{3, 4}, {4, 2}, {2, 5}, {5, 3}}, []int{3, 3}},
		{"abc,cd,bd->a", [][]int{{2, 3, 4}, {4, 5}, {3, 5}}, []int{2}},
		{"ii,ij->j", [][]int{{3, 3}, {3, 2}}, []int{2}},
		{"bhqd,bhkd->bhqk", [][]int{{2, 3, 5, 4}, {2, 3, 7, 4}}, []int{2, 3, 5, 7}},
		{"ij,ij->ij", [][]int{{3, 4}, {3, 4}}, []int{3, 4}},
		{"i,i,i->i", [][]int{{5}, {5}, {5}}, []int{5}},
		{"ij,kl->", [][]int{{0, 3}, {2, 2}}, []int{}},
	}
	for _, c := range cases {
		p, err := Parse(c.eq, c.shapes)
		if err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		var xs []nd
		for _, s := range c.shapes {
			xs = append(xs, random(r, s...))
		}
		n := 0
		got := Run[nd](p, ndOps{&n}, xs)
		want := naive(p, xs)
		if !slices.Equal(got.shape, c.out) || !slices.Equal(want.shape, c.out) {
			t.Fatalf("%s: shape %v (brute force %v), want %v", c.eq, got.shape, want.shape, c.out)
		}
		for i := range want.data {
			if math.Abs(got.data[i]-want.data[i]) > 1e-12 {
				t.Fatalf("%s: element %d = %v, want %v", c.eq, i, got.data[i], want.data[i])
			}
		}
		if n != len(p.Path) {
			t.Errorf("%s: %d matrix products for a path of %d steps", c.eq, n, len(p.Path))
		}
	}
}

// The greedy order contracts the small end of a chain first: A(2×100),
// B(100×100), C(100×2), D(2×100) with output A..D: contracting C·D first
// would make a 100×100 intermediate, A·B gives 2×100.
func TestGreedyPath(t *testing.T) {
	p, err := Parse("ab,bc,cd,de->ae", [][]int{{2, 100}, {100, 100}, {100, 2}, {2, 100}})
	if err != nil {
		t.Fatal(err)
	}
	// A·B (removes 10000 elements net), then B'·C, then with D.
	want := [][2]int{{0, 1}, {0, 2}, {0, 1}}
	if !slices.Equal(p.Path, want) {
		t.Fatalf("path %v, want %v", p.Path, want)
	}
	// The order changes neither the values nor the number of products.
	r := rand.New(rand.NewPCG(3, 4))
	xs := []nd{random(r, 2, 100), random(r, 100, 100), random(r, 100, 2), random(r, 2, 100)}
	n := 0
	got := Run[nd](p, ndOps{&n}, xs)
	left := *p
	left.Path = [][2]int{{2, 3}, {1, 2}, {0, 1}} // right to left
	other := Run[nd](&left, ndOps{&n}, xs)
	for i := range got.data {
		if math.Abs(got.data[i]-other.data[i]) > 1e-9 {
			t.Fatalf("element %d: greedy %v, right-to-left %v", i, got.data[i], other.data[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		eq     string
		shapes [][]int
		msg    string
	}{
		{"ij,jk->ik", [][]int{{2, 3}}, "2 operand terms for 1 operands"},
		{"ij->ik", [][]int{{2, 3}}, "output subscript k does not appear"},
		{"ij->ii", [][]int{{2, 3}}, "appears more than once in the output"},
		{"ij", [][]int{{2, 3, 4}}, "has 3 dims but 2 subscripts"},
		{"i1", [][]int{{2, 3}}, "invalid subscript"},
		{"i.j", [][]int{{2, 3}}, "lone '.'"},
		{"ij,jk", [][]int{{2, 3}, {4, 5}}, "do not broadcast"},
		{"ii", [][]int{{2, 3}}, "repeated in operand 0"},
		{"i->i->i", [][]int{{2}}, "more than one"},
		{"...i...", [][]int{{2}}, "more than one ellipsis"},
	} {
		_, err := Parse(c.eq, c.shapes)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: error %v, want *Error", c.eq, err)
		}
		if !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), c.eq) {
			t.Errorf("%s: %q should name the equation and say %q", c.eq, err, c.msg)
		}
	}
}
