package cpu

import (
	"math"

	"github.com/webtensor/webtensor/hal"
)

// layerNormGrain is the number of elements a worker must get before rows
// are split across goroutines: three passes of a few flops each.
const layerNormGrain = 1 << 15

// LayerNorm normalizes each row of src along its last axis; see
// hal.Device. A row is three passes while it is in cache: the mean, the
// variance of the centered values (two-pass, so a large mean does not
// cancel the variance away), and the scaled output. Rows are shared among
// goroutines as Softmax's are (eachRow).
func (d *Device) LayerNorm(dst, src hal.View, eps float64) error {
	const op = hal.KernelLayerNorm
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return errorf(op, hal.ErrInvalid, "eps %v for src %s must be finite and not negative", eps, desc(src))
	}
	out, in, rows, cols, err := d.rowOperands(op, dst, src)
	if err != nil || rows == 0 {
		return err
	}
	switch in.DType {
	case hal.Float64:
		eachRow(out, in, rows, cols, layerNormGrain, func(dst, x []float64) { layerNormRowF64(dst, x, eps) })
	default:
		e := float32(eps)
		eachRow(out, in, rows, cols, layerNormGrain, func(dst, x []float32) { layerNormRowF32(dst, x, e) })
	}
	return nil
}

// layerNormRowF32 writes (x − mean)/√(var + eps) of the row x into dst,
// of equal length ≥ 1. The sums run in float64 (sumF32's SIMD kernel for
// the mean), which costs nothing next to the loads and keeps the
// statistics exact to float32 for any row length; the output is one
// float32 product per element.
func layerNormRowF32(dst, x []float32, eps float32) {
	n := len(x)
	dst = dst[:n]
	mean := sumF32(x) / float64(n)
	m := float32(mean)
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		d0, d1, d2, d3 := float64(x[i]-m), float64(x[i+1]-m), float64(x[i+2]-m), float64(x[i+3]-m)
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < n; i++ {
		d := float64(x[i] - m)
		s0 += d * d
	}
	r := float32(1 / math.Sqrt((s0+s1+s2+s3)/float64(n)+float64(eps)))
	for i, v := range x {
		dst[i] = (v - m) * r
	}
}

// layerNormRowF64 is layerNormRowF32 in float64.
func layerNormRowF64(dst, x []float64, eps float64) {
	n := len(x)
	dst = dst[:n]
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(n)
	var sq float64
	for _, v := range x {
		sq += (v - m) * (v - m)
	}
	r := 1 / math.Sqrt(sq/float64(n)+eps)
	for i, v := range x {
		dst[i] = (v - m) * r
	}
}
