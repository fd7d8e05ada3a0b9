package tensor

import (
	"errors"
	"slices"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Fuzz targets for slicing and indexing: chains of views (Slice with
// negative and out-of-range bounds, Transpose, Permute, Squeeze, Split,
// Chunk, T) and Gather/IndexSelect with bad indices, on the CPU device,
// against fzArr references. A scalar has no dims to name, so every dim
// is out of range for it here (Flatten and Unsqueeze aside), which is
// the package's rule.

// fzSlice is Python's a[start:end:step] along dim.
func fzSlice(a fzArr, dim, start, end, step int) (fzArr, bool) {
	d, ok := fzAxis(dim, len(a.shape))
	if !ok || step < 1 {
		return fzArr{}, false
	}
	n := a.shape[d]
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	s, e := clamp(start), clamp(end)
	var picks []int
	for i := s; i < e; i += step {
		picks = append(picks, i)
	}
	return fzPick(a, d, picks), true
}

// fzPick takes the positions picks along axis d.
func fzPick(a fzArr, d int, picks []int) fzArr {
	shape := slices.Clone(a.shape)
	shape[d] = len(picks)
	return fzBuild(shape, func(idx []int) float64 {
		j := slices.Clone(idx)
		j[d] = picks[idx[d]]
		return a.data[a.index(j)]
	})
}

// fzPermute gives axis i of the result axis perm[i] of a.
func fzPermute(a fzArr, perm []int) fzArr {
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = a.shape[p]
	}
	return fzBuild(shape, func(idx []int) float64 {
		j := make([]int, len(perm))
		for i, p := range perm {
			j[p] = idx[i]
		}
		return a.data[a.index(j)]
	})
}

func FuzzSliceViews(f *testing.F) {
	f.Add([]byte{2, 5, 6, 0, 0, 1, 3, 9, 2})             // Slice(1, −2, 20, 3) of [5 6]
	f.Add([]byte{3, 2, 3, 4, 1, 2, 0, 4, 6, 0, 5, 1, 3}) // transposed, then Permute
	f.Add([]byte{2, 4, 1, 0, 3, 7, 1, 0, 0})             // Squeeze, Slice step 0
	f.Add([]byte{1, 7, 0, 4, 0, 3, 5, 0, 2, 2})          // Split, Chunk
	f.Add([]byte{0, 0, 0, 0, 2, 0, 1})                   // a scalar
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		s := in.shape(6, 7)
		a := fzSeq(s, 1)
		x := fzUpload(dev, a, in.intn(2) == 1)
		defer func() { x.Release() }()
		// next replaces x by y, keeping one reference.
		next := func(y *Tensor, want fzArr, what string) {
			x.Release()
			x, a = y, want
			fzCheck(t, what, x, a)
		}
		for step := 0; step < 6 && in.i < len(in.b); step++ {
			r := len(a.shape)
			switch in.intn(7) {
			case 0:
				dim, st, en, sp := in.signed(r+1), in.signed(9), in.signed(9), in.intn(5)
				want, ok := fzSlice(a, dim, st, en, sp)
				var y *Tensor
				if fzExpect(t, "Slice", ok, fzDesc(a.shape, dim, st, en, sp), func() { y = x.Slice(dim, st, en, sp) }) {
					next(y, want, "Slice"+fzDesc(dim, st, en, sp))
				}
			case 1:
				d0, d1 := in.signed(r+1), in.signed(r+1)
				a0, ok0 := fzAxis(d0, r)
				a1, ok1 := fzAxis(d1, r)
				var y *Tensor
				if fzExpect(t, "Transpose", ok0 && ok1, fzDesc(a.shape, d0, d1), func() { y = x.Transpose(d0, d1) }) {
					perm := make([]int, r)
					for i := range perm {
						perm[i] = i
					}
					perm[a0], perm[a1] = a1, a0
					next(y, fzPermute(a, perm), "Transpose")
				}
			case 2:
				dims := make([]int, in.intn(r+2))
				for i := range dims {
					dims[i] = in.signed(r + 1)
				}
				perm, ok := fzPermutation(dims, r)
				var y *Tensor
				if fzExpect(t, "Permute", ok, fzDesc(a.shape, dims), func() { y = x.Permute(dims...) }) {
					next(y, fzPermute(a, perm), "Permute"+fzDesc(dims))
				}
			case 3:
				var dims []int
				if in.intn(2) == 1 {
					dims = []int{in.signed(r + 1), in.signed(r + 1)}[:1+in.intn(2)]
				}
				want, ok := fzSqueeze(a, dims)
				var y *Tensor
				if fzExpect(t, "Squeeze", ok, fzDesc(a.shape, dims), func() { y = x.Squeeze(dims...) }) {
					next(y, want, "Squeeze"+fzDesc(dims))
				}
			case 4, 5:
				op := "Split"
				if in.intn(2) == 1 {
					op = "Chunk"
				}
				dim, size, pick := in.signed(r+1), in.intn(5), in.intn(8)
				d, ok := fzAxis(dim, r)
				ok = ok && size >= 1
				var parts []*Tensor
				if !fzExpect(t, op, ok, fzDesc(a.shape, dim, size), func() {
					if op == "Split" {
						parts = x.Split(dim, size)
					} else {
						parts = x.Chunk(dim, size)
					}
				}) {
					continue
				}
				width := size
				if op == "Chunk" {
					width = max(1, (a.shape[d]+size-1)/size)
				}
				wantN := max(1, (a.shape[d]+width-1)/width)
				if len(parts) != wantN {
					t.Fatalf("%s(%v, %d, %d) gave %d parts, want %d", op, a.shape, dim, size, len(parts), wantN)
				}
				pick %= len(parts)
				for i, p := range parts {
					if i != pick {
						p.Release()
					}
				}
				want, _ := fzSlice(a, d, pick*width, (pick+1)*width, 1)
				next(parts[pick], want, op+fzDesc(dim, size, pick))
			case 6:
				var y *Tensor
				if fzExpect(t, "T", r <= 2, fzDesc(a.shape), func() { y = x.T() }) {
					want := a
					if r == 2 {
						want = fzPermute(a, []int{1, 0})
					}
					next(y, want, "T")
				}
			}
		}
		// Whatever the chain made, packing it must give the same values.
		c := x.Contiguous()
		defer c.Release()
		fzCheck(t, "Contiguous", c, a)
	})
}

// fzPermutation resolves dims as torch.permute does: one per axis, each
// axis once.
func fzPermutation(dims []int, r int) ([]int, bool) {
	if len(dims) != r {
		return nil, false
	}
	seen := make([]bool, r)
	perm := make([]int, r)
	for i, d := range dims {
		a, ok := fzAxis(d, r)
		if !ok || seen[a] {
			return nil, false
		}
		seen[a], perm[i] = true, a
	}
	return perm, true
}

// fzSqueeze drops the named size-1 axes (all size-1 axes without dims);
// named axes of another size stay, as torch.
func fzSqueeze(a fzArr, dims []int) (fzArr, bool) {
	drop := make([]bool, len(a.shape))
	if len(dims) == 0 {
		for i, d := range a.shape {
			drop[i] = d == 1
		}
	}
	seen := make([]bool, len(a.shape))
	for _, d := range dims {
		ax, ok := fzAxis(d, len(a.shape))
		if !ok || seen[ax] {
			return fzArr{}, false
		}
		seen[ax] = true
		drop[ax] = a.shape[ax] == 1
	}
	var shape []int
	for i, d := range a.shape {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return fzArr{shape, a.data}, true
}

func FuzzGather(f *testing.F) {
	f.Add([]byte{2, 3, 4, 0, 1, 0, 0, 1, 2, 3, 0, 1, 2, 3})    // IndexSelect in range
	f.Add([]byte{2, 3, 4, 1, 1, 1, 3, 0, 4, 9, 1, 2, 3, 5, 7}) // Gather with bad indices
	f.Add([]byte{1, 5, 0, 0, 1, 2, 0})                         // a float index
	f.Add([]byte{3, 2, 0, 3, 1, 2, 1, 1, 0, 0, 0, 0})          // an empty axis
	dev := fzCPU(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzBytes{b: data}
		s := in.shape(5, 5)
		a := fzSeq(s, 1)
		x := fzUpload(dev, a, in.intn(2) == 1)
		defer x.Release()
		r := len(s)
		gather := in.intn(2) == 1
		dim := in.signed(r + 1)
		floatIndex := in.intn(16) == 0
		d, ok := fzAxis(dim, r)

		// The index: for IndexSelect a vector (rarely a scalar or a
		// matrix), for Gather usually t's rank with each axis at most t's.
		var ishape []int
		switch {
		case !gather && in.intn(8) == 0:
			ishape = in.shape(3, 3)
		case !gather:
			ishape = []int{in.intn(6)}
		default:
			ishape = slices.Clone(s)
			if in.intn(8) == 0 {
				ishape = in.shape(5, 5)
			}
			for i := range ishape {
				ishape[i] = max(0, ishape[i]-in.intn(3)+in.intn(8)/7) // now and then one more
			}
		}
		n := 0
		if ok {
			n = s[d]
		}
		idx := fzBuild(ishape, func([]int) float64 { return float64(in.intn(n+4) - 2) })
		var index *Tensor
		if floatIndex {
			index = idx.upload(dev)
		} else {
			vals := make([]int32, len(idx.data))
			for i, v := range idx.data {
				vals[i] = int32(v)
			}
			index = FromInt32(dev, vals, ishape...)
		}
		defer index.Release()
		inRange := !slices.ContainsFunc(idx.data, func(v float64) bool { return v < 0 || int(v) >= n })

		var want fzArr
		op := "IndexSelect"
		if gather {
			op = "Gather"
			ok = ok && !floatIndex && len(ishape) == r
			for i := range ishape {
				ok = ok && (i == d || ishape[i] <= s[i])
			}
			if ok {
				want = fzBuild(ishape, func(j []int) float64 {
					k := slices.Clone(j)
					k[d] = int(idx.data[idx.index(j)])
					if k[d] < 0 || k[d] >= n {
						return 0
					}
					return a.data[a.index(k)]
				})
			}
		} else {
			ok = ok && !floatIndex && len(ishape) <= 1
			if ok {
				picks := make([]int, len(idx.data))
				for i, v := range idx.data {
					picks[i] = min(max(int(v), 0), n-1)
				}
				if inRange {
					want = fzPick(a, d, picks)
				}
			}
		}
		var got *Tensor
		if !fzExpect(t, op, ok, fzDesc(s, dim, ishape), func() {
			if gather {
				got = x.Gather(dim, index)
			} else {
				got = x.IndexSelect(dim, index)
			}
		}) {
			return
		}
		defer got.Release()
		if inRange {
			fzCheck(t, op+fzDesc(s, dim, idx.data), got, want)
			return
		}
		// An index out of range is a device failure that names it, not a
		// panic and not a silent value.
		_, err := got.Float32s()
		if got.Len() == 0 && err == nil {
			return // an empty result reads nothing, so no index is checked
		}
		if !errors.Is(err, hal.ErrIndexOutOfRange) {
			t.Fatalf("%s(%v, dim %d, index %v): error %v, want hal.ErrIndexOutOfRange", op, s, dim, idx.data, err)
		}
		var te *Error
		if !errors.As(err, &te) || te.Op != op {
			t.Fatalf("%s: the error %v does not name the op", op, err)
		}
	})
}
