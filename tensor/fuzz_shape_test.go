package tensor

import (
	"slices"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Fuzz targets for broadcasting and shape inference: random shapes (some
// invalid, some empty, some at the rank limit) through the binary ops,
// Expand, MatMul, Reshape, Concat and Stack on the CPU device, checked
// against fzArr references. `make fuzz` runs them; their seeds and the
// crashers kept in testdata/fuzz run with every `go test`.

// fzUpload makes a tensor holding a's values; with transposed (and rank
// ≥ 2) it is a Transpose view of a tensor stored with the last two axes
// swapped, so that the ops also see strided operands.
func fzUpload(dev *Device, a fzArr, transposed bool) *Tensor {
	r := len(a.shape)
	if !transposed || r < 2 {
		return a.upload(dev)
	}
	swapped := slices.Clone(a.shape)
	swapped[r-1], swapped[r-2] = swapped[r-2], swapped[r-1]
	s := fzBuild(swapped, func(idx []int) float64 {
		j := slices.Clone(idx)
		j[r-1], j[r-2] = j[r-2], j[r-1]
		return a.data[a.index(j)]
	})
	x := s.upload(dev)
	defer x.Release()
	return x.Transpose(-1, -2)
}

// fzSmall is a with values in −2 … 2, so that MatMul's sums stay exact.
func fzSmall(shape []int, seed int) fzArr {
	a := fzSeq(shape, 0)
	for i := range a.data {
		a.data[i] = float64((i*7+seed)%5 - 2)
	}
	return a
}

// fzBroadcastShape is NumPy's broadcast of two shapes.
func fzBroadcastShape(a, b []int) ([]int, bool) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := range out {
		da, db := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// fzAt reads a at the position of out-index idx under broadcasting (a's
// axes align at the end; size-1 axes repeat).
func fzAt(a fzArr, idx []int) float64 {
	j := make([]int, len(a.shape))
	lead := len(idx) - len(a.shape)
	for i, d := range a.shape {
		if d != 1 {
			j[i] = idx[lead+i]
		}
	}
	return a.data[a.index(j)]
}

var fzBinary = []struct {
	name string
	f    func(a, b *Tensor) *Tensor
	ref  func(x, y float64) float64
}{
	{"Add", Add, func(x, y float64) float64 { return x + y }},
	{"Sub", Sub, func(x, y float64) float64 { return x - y }},
	{"Mul", Mul, func(x, y float64) float64 { return x * y }},
	{"Maximum", Maximum, func(x, y float64) float64 { return max(x, y) }},
	{"Lt", Lt, func(x, y float64) float64 {
		if x < y {
			return 1
		}
		return 0
	}},
}

func FuzzBroadcast(f *testing.F) {
	f.Add([]byte{0, 2, 3, 4, 2, 1, 4})                  // [3 4] + [4]
	f.Add([]byte{1, 3, 2, 1, 3, 3, 2, 3, 1, 0})         // [2 1 3] − [2 3 1]
	f.Add([]byte{2, 2, 0, 3, 1, 1, 1})                  // [0 3] · [1]: empty
	f.Add([]byte{0, 2, 3, 4, 2, 4, 3})                  // [3 4] + [4 3]: mismatch
	f.Add([]byte{3, 8, 1, 2, 1, 1, 1, 1, 1, 2, 0, 1})   // rank 8
	f.Add([]byte{0, 1, 3, 0, 1, 9, 3, 7, 1, 3, 2, 255}) // Expand with −1 and new axes
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		bin := fzBinary[in.intn(len(fzBinary))]
		sa, sb := in.shape(hal.MaxRank+1, 4), in.shape(hal.MaxRank+1, 4)
		ta, tb := in.intn(2) == 1, in.intn(2) == 1
		a, b := fzSeq(sa, 1), fzSmall(sb, 3)
		x, y := fzUpload(dev, a, ta), fzUpload(dev, b, tb)
		defer releaseAll(x, y)

		shape, ok := fzBroadcastShape(sa, sb)
		var got *Tensor
		if fzExpect(t, bin.name, ok, fzDesc(sa, sb), func() { got = bin.f(x, y) }) {
			defer got.Release()
			want := fzBuild(shape, func(idx []int) float64 { return bin.ref(fzAt(a, idx), fzAt(b, idx)) })
			fzCheck(t, bin.name+fzDesc(sa, sb), got, want)
		}

		// Expand x to a target with −1s and new leading axes.
		target := make([]int, in.intn(hal.MaxRank+3))
		for i := range target {
			target[i] = in.intn(6) - 1
		}
		to, ok := fzExpandShape(sa, target)
		var e *Tensor
		if fzExpect(t, "Expand", ok, fzDesc(sa, target), func() { e = x.Expand(target...) }) {
			defer e.Release()
			fzCheck(t, "Expand"+fzDesc(sa, target), e, fzBuild(to, func(idx []int) float64 { return fzAt(a, idx) }))
		}
	})
}

// fzExpandShape is torch.expand's result shape, or false where torch
// refuses (and beyond the rank limit, which is ours).
func fzExpandShape(from, target []int) ([]int, bool) {
	if len(target) < len(from) || len(target) > hal.MaxRank {
		return nil, false
	}
	out := slices.Clone(target)
	lead := len(target) - len(from)
	for i, d := range target {
		if i < lead {
			if d < 0 {
				return nil, false
			}
			continue
		}
		src := from[i-lead]
		switch {
		case d == -1:
			out[i] = src
		case d < 0:
			return nil, false
		case d != src && src != 1:
			return nil, false
		}
	}
	return out, true
}

func FuzzMatMul(f *testing.F) {
	f.Add([]byte{2, 3, 4, 2, 4, 5, 0, 0})       // [3 4]·[4 5]
	f.Add([]byte{1, 4, 1, 4, 0, 0})             // dot
	f.Add([]byte{3, 2, 3, 4, 1, 4, 1, 0})       // [2 3 4]·[4]
	f.Add([]byte{1, 3, 3, 2, 3, 2, 0, 1})       // [3]·[2 3 2]
	f.Add([]byte{4, 2, 1, 3, 2, 3, 3, 2, 2, 0}) // batch broadcast
	f.Add([]byte{2, 0, 3, 2, 3, 0, 0, 0})       // [0 3]·[3 0]
	f.Add([]byte{2, 3, 0, 2, 0, 2, 0, 0})       // K = 0: zeros
	f.Add([]byte{0, 1, 3, 0, 0})                // a scalar operand
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		sa, sb := in.shape(6, 5), in.shape(6, 5)
		ta, tb := in.intn(2) == 1, in.intn(2) == 1
		a, b := fzSmall(sa, 1), fzSmall(sb, 4)
		x, y := fzUpload(dev, a, ta), fzUpload(dev, b, tb)
		defer releaseAll(x, y)
		want, ok := fzMatMul(a, b)
		var got *Tensor
		if fzExpect(t, "MatMul", ok, fzDesc(sa, sb), func() { got = MatMul(x, y) }) {
			defer got.Release()
			fzCheck(t, "MatMul"+fzDesc(sa, sb), got, want)
		}
	})
}

// fzMatMul is torch.matmul written out: vectors are promoted and the
// added axis dropped again; batch axes broadcast.
func fzMatMul(a, b fzArr) (fzArr, bool) {
	if len(a.shape) == 0 || len(b.shape) == 0 {
		return fzArr{}, false
	}
	as, bs := slices.Clone(a.shape), slices.Clone(b.shape)
	dropM, dropN := len(as) == 1, len(bs) == 1
	if dropM {
		as = []int{1, as[0]}
	}
	if dropN {
		bs = []int{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return fzArr{}, false
	}
	batch, ok := fzBroadcastShape(as[:len(as)-2], bs[:len(bs)-2])
	if !ok {
		return fzArr{}, false
	}
	A, B := fzArr{as, a.data}, fzArr{bs, b.data}
	full := append(slices.Clone(batch), m, n)
	out := fzBuild(full, func(idx []int) float64 {
		r := len(idx)
		s := 0.0
		for kk := range k {
			ia := append(slices.Clone(idx[:r-2]), idx[r-2], kk)
			ib := append(slices.Clone(idx[:r-2]), kk, idx[r-1])
			s += fzAt(A, ia) * fzAt(B, ib)
		}
		return s
	})
	shape := slices.Clone(batch)
	if !dropM {
		shape = append(shape, m)
	}
	if !dropN {
		shape = append(shape, n)
	}
	out.shape = shape
	return out, true
}

func FuzzReshape(f *testing.F) {
	f.Add([]byte{3, 2, 3, 4, 0, 2, 6, 4})    // [2 3 4] → [6 4]
	f.Add([]byte{3, 2, 3, 4, 1, 2, 0, 6})    // transposed → [−1 6]
	f.Add([]byte{2, 0, 3, 0, 2, 0, 0})       // [0 3] → [0 −1]: ambiguous
	f.Add([]byte{2, 2, 2, 0, 2, 0, 0})       // two −1s
	f.Add([]byte{1, 5, 0, 3, 1, 7, 2, 3, 1}) // Flatten and Unsqueeze after
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		s := in.shape(6, 5)
		a := fzSeq(s, 1)
		x := fzUpload(dev, a, in.intn(2) == 1)
		defer x.Release()
		target := make([]int, in.intn(hal.MaxRank+2))
		for i := range target {
			target[i] = in.intn(9) - 2
		}
		shape, ok := fzReshapeShape(fzProd(s), target)
		var r *Tensor
		if !fzExpect(t, "Reshape", ok, fzDesc(s, target), func() { r = x.Reshape(target...) }) {
			return
		}
		defer r.Release()
		fzCheck(t, "Reshape"+fzDesc(s, target), r, fzArr{shape, a.data})

		// Flatten then Unsqueeze the result: more shape inference on a
		// shape the fuzzer chose.
		start, end := in.signed(hal.MaxRank+1), in.signed(hal.MaxRank+1)
		fs, ok := fzFlattenShape(shape, start, end)
		var fl *Tensor
		if !fzExpect(t, "Flatten", ok, fzDesc(shape, start, end), func() { fl = r.Flatten(start, end) }) {
			return
		}
		defer fl.Release()
		fzCheck(t, "Flatten", fl, fzArr{fs, a.data})
		dim := in.signed(hal.MaxRank + 2)
		d, ok := fzAxis(dim, len(fs)+1)
		ok = ok && len(fs) < hal.MaxRank
		var u *Tensor
		if !fzExpect(t, "Unsqueeze", ok, fzDesc(fs, dim), func() { u = fl.Unsqueeze(dim) }) {
			return
		}
		defer u.Release()
		fzCheck(t, "Unsqueeze", u, fzArr{slices.Insert(slices.Clone(fs), d, 1), a.data})
	})
}

// fzReshapeShape resolves torch.reshape's target for n elements.
func fzReshapeShape(n int, target []int) ([]int, bool) {
	if len(target) > hal.MaxRank {
		return nil, false
	}
	out := slices.Clone(target)
	infer, known := -1, 1
	for i, d := range target {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return nil, false
		default:
			known *= d
		}
	}
	if infer < 0 {
		return out, known == n
	}
	if known == 0 || n%known != 0 {
		return nil, false
	}
	out[infer] = n / known
	return out, true
}

// fzFlattenShape is torch.flatten's result shape (a scalar flattens to
// [1] whatever the dims, if they are in −1 … 0).
func fzFlattenShape(s []int, start, end int) ([]int, bool) {
	if len(s) == 0 {
		_, ok1 := fzAxis(start, 1)
		_, ok2 := fzAxis(end, 1)
		return []int{1}, ok1 && ok2
	}
	a, ok1 := fzAxis(start, len(s))
	b, ok2 := fzAxis(end, len(s))
	if !ok1 || !ok2 || a > b {
		return nil, false
	}
	out := slices.Clone(s[:a])
	out = append(out, fzProd(s[a:b+1]))
	return append(out, s[b+1:]...), true
}

func FuzzConcat(f *testing.F) {
	f.Add([]byte{2, 2, 2, 3, 0, 1, 0, 2, 0})       // two [2 3] on dim 0
	f.Add([]byte{3, 3, 2, 0, 3, 9, 1, 0, 1, 0, 0}) // with an empty part
	f.Add([]byte{2, 1, 2, 3, 4, 1, 1, 1, 0})       // mismatch on the other axis
	f.Add([]byte{0, 0, 0})                         // nothing to join
	f.Add([]byte{1, 0, 0, 0})                      // a scalar
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		n := in.intn(5)
		base := in.shape(5, 4)
		dim := in.signed(5)
		var parts []fzArr
		var xs []*Tensor
		defer func() { releaseAll(xs...) }()
		for i := range n {
			s := slices.Clone(base)
			if len(s) > 0 {
				// Each part changes one axis, usually the joined one.
				ax := in.intn(len(s))
				if in.intn(4) != 0 {
					ax, _ = fzAxis(dim, len(s))
					ax = max(0, min(ax, len(s)-1))
				}
				s[ax] = in.intn(4)
			}
			p := fzSeq(s, float64(100*i))
			parts = append(parts, p)
			xs = append(xs, fzUpload(dev, p, in.intn(2) == 1))
		}
		want, ok := fzConcat(parts, dim)
		var got *Tensor
		if fzExpect(t, "Concat", ok, fzDesc(base, n, dim), func() { got = Concat(dim, xs...) }) {
			defer got.Release()
			fzCheck(t, "Concat", got, want)
		}
		want, ok = fzStack(parts, dim)
		if fzExpect(t, "Stack", ok, fzDesc(base, n, dim), func() { got = Stack(dim, xs...) }) {
			defer got.Release()
			fzCheck(t, "Stack", got, want)
		}
	})
}

// fzConcat is torch.cat (without its legacy exception for 1-D empty
// tensors, which this package does not make).
func fzConcat(parts []fzArr, dim int) (fzArr, bool) {
	if len(parts) == 0 || len(parts[0].shape) == 0 {
		return fzArr{}, false
	}
	r := len(parts[0].shape)
	a, ok := fzAxis(dim, r)
	if !ok {
		return fzArr{}, false
	}
	shape := slices.Clone(parts[0].shape)
	shape[a] = 0
	for _, p := range parts {
		if len(p.shape) != r {
			return fzArr{}, false
		}
		for i := range r {
			if i != a && p.shape[i] != shape[i] {
				return fzArr{}, false
			}
		}
		shape[a] += p.shape[a]
	}
	return fzBuild(shape, func(idx []int) float64 {
		j := slices.Clone(idx)
		for _, p := range parts {
			if j[a] < p.shape[a] {
				return p.data[p.index(j)]
			}
			j[a] -= p.shape[a]
		}
		panic("unreachable")
	}), true
}

// fzStack is torch.stack: equal shapes joined along a new axis.
func fzStack(parts []fzArr, dim int) (fzArr, bool) {
	if len(parts) == 0 {
		return fzArr{}, false
	}
	r := len(parts[0].shape)
	a, ok := fzAxis(dim, r+1)
	if !ok || r+1 > hal.MaxRank {
		return fzArr{}, false
	}
	for _, p := range parts {
		if !slices.Equal(p.shape, parts[0].shape) {
			return fzArr{}, false
		}
	}
	shape := slices.Insert(slices.Clone(parts[0].shape), a, len(parts))
	return fzBuild(shape, func(idx []int) float64 {
		p := parts[idx[a]]
		return p.data[p.index(slices.Delete(slices.Clone(idx), a, a+1))]
	}), true
}
