package tensor

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// The fuzz targets (fuzz_*_test.go) decode their []byte input with a
// fuzzBytes, run an op on the CPU device and compare against fzArr, a
// plain row-major float64 array with the op written out again in Go. The
// contract they check: an op either gives the reference's shape and
// values, or panics with an *Error naming the op — never another panic
// type, never a wrong answer.

// fuzzBytes hands out small integers from the fuzzer's bytes; past the
// end every read is 0, so any input decodes to something.
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) byte() byte {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return f.b[f.i-1]
}

// intn returns a value in [0, n).
func (f *fuzzBytes) intn(n int) int { return int(f.byte()) % n }

// signed returns a value in [−n, n].
func (f *fuzzBytes) signed(n int) int { return f.intn(2*n+1) - n }

// shape returns a shape of rank < maxRank with dims in [0, maxDim).
func (f *fuzzBytes) shape(maxRank, maxDim int) []int {
	s := make([]int, f.intn(maxRank))
	for i := range s {
		s[i] = f.intn(maxDim)
	}
	return s
}

// fzArr is the reference: a shape and its elements in row-major order.
type fzArr struct {
	shape []int
	data  []float64
}

func fzProd(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// seqArr numbers the elements 1, 2, … from base, so that every element
// is distinct and exactly representable in float32.
func fzSeq(shape []int, base float64) fzArr {
	a := fzArr{shape: slices.Clone(shape), data: make([]float64, fzProd(shape))}
	for i := range a.data {
		a.data[i] = base + float64(i)
	}
	return a
}

func (a fzArr) upload(dev *Device) *Tensor {
	data := make([]float32, len(a.data))
	for i, v := range a.data {
		data[i] = float32(v)
	}
	return FromFloat32(dev, data, a.shape...)
}

// index returns the flat position of the multi-index idx.
func (a fzArr) index(idx []int) int {
	p := 0
	for i, d := range a.shape {
		p = p*d + idx[i]
	}
	return p
}

// each calls f with every multi-index of shape in row-major order.
func fzEach(shape []int, f func(idx []int)) {
	if fzProd(shape) == 0 {
		return
	}
	idx := make([]int, len(shape))
	for {
		f(idx)
		i := len(shape) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// build makes the array of shape whose element at idx is f(idx).
func fzBuild(shape []int, f func(idx []int) float64) fzArr {
	out := fzArr{shape: slices.Clone(shape)}
	fzEach(shape, func(idx []int) { out.data = append(out.data, f(idx)) })
	if out.data == nil {
		out.data = []float64{}
	}
	return out
}

// refAxis resolves a PyTorch dim against rank, reporting whether it is in
// range.
func fzAxis(dim, rank int) (int, bool) {
	if dim < 0 {
		dim += rank
	}
	return dim, dim >= 0 && dim < rank
}

// checkRef fails unless x has want's shape and values (exactly: the fuzz
// inputs are small integers, whose sums and products float32 holds).
func fzCheck(t *testing.T, what string, x *Tensor, want fzArr) {
	t.Helper()
	if !slices.Equal(x.Shape(), want.shape) && !(len(x.Shape()) == 0 && len(want.shape) == 0) {
		t.Fatalf("%s: shape %v, want %v", what, x.Shape(), want.shape)
	}
	got, err := x.Float64s()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) != len(want.data) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want.data))
	}
	for i := range got {
		if got[i] != want.data[i] && !(math.IsNaN(got[i]) && math.IsNaN(want.data[i])) {
			t.Fatalf("%s: element %d is %v, want %v\ngot  %v\nwant %v", what, i, got[i], want.data[i], got, want.data)
		}
	}
}

// misuseOf runs f and returns the *Error it panicked with, or nil if it
// returned. Any other panic fails the test with its stack, and so does an
// *Error that does not name op.
func fzMisuse(t *testing.T, op string, f func()) (e *Error) {
	t.Helper()
	func() {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			var ok bool
			if e, ok = r.(*Error); !ok {
				t.Fatalf("%s panicked with %T, not *tensor.Error: %v\n%s", op, r, r, debug.Stack())
			}
		}()
		f()
	}()
	if e != nil && !strings.HasPrefix(e.Op, op) {
		t.Fatalf("%s panicked with an *Error naming %q: %v", op, e.Op, e)
	}
	return e
}

// expectOp runs f, which calls op, and checks it against the reference:
// valid says whether PyTorch accepts the call. A valid call must not
// panic; an invalid one must panic with an *Error naming op.
func fzExpect(t *testing.T, op string, valid bool, desc string, f func()) bool {
	t.Helper()
	e := fzMisuse(t, op, f)
	switch {
	case valid && e != nil:
		t.Fatalf("%s(%s) is valid but panicked: %v", op, desc, e)
	case !valid && e == nil:
		t.Fatalf("%s(%s) is invalid but did not panic", op, desc)
	}
	return e == nil
}

func fzDesc(args ...any) string { return strings.TrimSuffix(fmt.Sprintln(args...), "\n") }

// fzCPU opens the CPU device for a fuzz target.
func fzCPU(f *testing.F) *Device {
	dev, err := Open("cpu")
	if err != nil {
		f.Fatal(err)
	}
	return dev
}
