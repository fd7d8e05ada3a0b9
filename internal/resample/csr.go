package resample

import "github.com/webtensor/webtensor/hal"

// Forward is the taps as the sparse matrix hal.Device.Resample applies:
// output position o's row lists tap 0, 1, … in order, so that the kernel
// sums the products in the order the composite of Gathers and Adds did.
func (t Taps) Forward() hal.ResampleTaps {
	k := len(t.Index)
	out := len(t.Index[0])
	r := hal.ResampleTaps{Offsets: make([]int32, out+1), Index: make([]int32, 0, k*out), Weight: make([]float64, 0, k*out)}
	for o := range out {
		for tap := range k {
			r.Index = append(r.Index, t.Index[tap][o])
			r.Weight = append(r.Weight, t.Weight[tap][o])
		}
		r.Offsets[o+1] = int32(len(r.Index))
	}
	return r
}

// Transposed is the adjoint of the taps in gather form, for the gradient:
// input position i's row lists every (output, weight) that reads i, in
// increasing output order, so that each input gathers its gradient without
// atomics or scatter. in is the axis's input size. A row holds about
// taps·out/in entries; the caller splits a table whose rows exceed
// hal.MaxResampleRow (an upsampling by thousands) with Split.
func (t Taps) Transposed(in int) hal.ResampleTaps {
	count := make([]int32, in+1)
	for _, idx := range t.Index {
		for _, i := range idx {
			count[i+1]++
		}
	}
	for i := range in {
		count[i+1] += count[i]
	}
	n := int(count[in])
	r := hal.ResampleTaps{Offsets: append([]int32(nil), count...), Index: make([]int32, n), Weight: make([]float64, n)}
	next := count[:in] // the next free entry of each row
	for o := range len(t.Index[0]) {
		for tap, idx := range t.Index {
			i := idx[o]
			r.Index[next[i]], r.Weight[next[i]] = int32(o), t.Weight[tap][o]
			next[i]++
		}
	}
	return r
}

// Split cuts a table whose rows may exceed limit entries into tables of
// rows of at most limit entries each (part k holds each row's entries
// k·limit … (k+1)·limit − 1), whose results add up to the table's. A table
// within the bound is its own only part.
func Split(t hal.ResampleTaps, limit int) []hal.ResampleTaps {
	longest := 0
	for j := range t.Rows() {
		longest = max(longest, int(t.Offsets[j+1]-t.Offsets[j]))
	}
	if longest <= limit {
		return []hal.ResampleTaps{t}
	}
	parts := make([]hal.ResampleTaps, (longest+limit-1)/limit)
	for k := range parts {
		p := hal.ResampleTaps{Offsets: []int32{0}}
		for j := range t.Rows() {
			lo := min(int(t.Offsets[j])+k*limit, int(t.Offsets[j+1]))
			hi := min(lo+limit, int(t.Offsets[j+1]))
			p.Index = append(p.Index, t.Index[lo:hi]...)
			p.Weight = append(p.Weight, t.Weight[lo:hi]...)
			p.Offsets = append(p.Offsets, int32(len(p.Index)))
		}
		parts[k] = p
	}
	return parts
}
