package cpu

import (
	"math"
	"math/bits"

	"github.com/webtensor/webtensor/hal"
)

// philox is Philox4x32-10 (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC11), the counter-based generator every backend uses,
// so a given (seed, offset) draws the same stream everywhere.
func philox(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const (
		m0, m1 = 0xD2511F53, 0xCD9E8D57
		w0, w1 = 0x9E3779B9, 0xBB67AE85 // Weyl key increments
	)
	for range 10 {
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
		key[0] += w0
		key[1] += w1
	}
	return ctr
}

// Random fills dst's elements i with a draw from the Philox block at
// counter offset+i under key seed; see hal.Distribution. Values are
// computed in float64 and rounded to dst's dtype once.
func (d *Device) Random(dst hal.View, dist hal.Distribution, p float64, seed, offset uint64) error {
	op := dist.Kernel()
	o, err := d.operands(op, "dst", dst)
	if err != nil {
		return err
	}
	out := o[0]
	if !d.caps.Supports(op, out.DType) {
		return unsupportedDType(op, out.DType)
	}
	if err := needContiguous(op, "dst", out); err != nil {
		return err
	}
	d.dispatch()
	key := [2]uint32{uint32(seed), uint32(seed >> 32)}
	// Compare 24-bit integers so that Bernoulli is exact and matches the
	// GPU's integer test bit for bit.
	threshold := int64(math.RoundToEven(p * (1 << 24)))
	if math.IsNaN(p) {
		threshold = 0
	}
	draw := func(w [4]uint32) float64 {
		switch dist {
		case hal.Normal:
			u1 := float64(w[0]>>8+1) * 0x1p-24
			u2 := float64(w[1]>>8) * 0x1p-24
			return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		case hal.Bernoulli:
			if int64(w[0]>>8) < threshold {
				return 1
			}
			return 0
		}
		return float64(w[0]>>8) * 0x1p-24
	}
	generate(out, mathGrain, func(i int) float64 {
		ctr := offset + uint64(i)
		return draw(philox([4]uint32{uint32(ctr), uint32(ctr >> 32)}, key))
	})
	return nil
}
