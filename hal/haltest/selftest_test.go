package haltest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// The suite's own references are checked here, without a device.

func TestPhiloxKnownAnswers(t *testing.T) {
	for _, v := range philoxKAT {
		assert.Equal(t, v.want, philox4x32(v.ctr, v.key), "ctr %08x key %08x", v.ctr, v.key)
	}
}

func TestFloat16(t *testing.T) {
	// Every binary16 value survives a round trip, and rounding a value
	// halfway between two neighbours goes to the even one.
	for h := range 1 << 16 {
		v := f16Value(uint16(h))
		if math.IsNaN(v) {
			assert.True(t, math.IsNaN(f16Value(f16Bits(v))))
			continue
		}
		assert.Equal(t, uint16(h), f16Bits(v), "bits %04x value %g", h, v)
	}
	assert.Equal(t, uint16(0x3c00), f16Bits(1+0x1p-11), "1+2⁻¹¹ ties to even 1")
	assert.Equal(t, uint16(0x3c02), f16Bits(1+3*0x1p-11), "1+3·2⁻¹¹ ties to even 1+2⁻⁹")
	assert.Equal(t, uint16(0x7bff), f16Bits(65519), "below the halfway point to 65536")
	assert.Equal(t, uint16(0x7c00), f16Bits(65520), "halfway to 65536 rounds to even: Inf")
	assert.Equal(t, uint16(0x0001), f16Bits(0x1p-24), "smallest subnormal")
	assert.Equal(t, uint16(0x0000), f16Bits(0x1p-25), "half the smallest subnormal ties to 0")
	assert.Equal(t, uint16(0x0400), f16Bits(0x1p-14-0x1p-26), "rounds up into the normals")
	assert.Equal(t, 65504.0, f16Value(0x7bff))
}

// TestEveryTableOpHasAReference: the suite tests every op of hal's op
// table, so an op added there fails here until the suite defines it.
func TestEveryTableOpHasAReference(t *testing.T) {
	for _, op := range hal.UnaryOps {
		def, ok := unaryDefs[op]
		if assert.True(t, ok, "no reference for unary %v", op) {
			assert.NotNil(t, def.f, "unary %v", op)
			assert.NotNil(t, def.gen, "unary %v", op)
		}
	}
}

// TestEveryKernelHasACase: the suite has a case for every kernel of hal's
// kernel table (Copy's is testCopyPairs), so a kernel added there fails
// here until the suite tests it.
func TestEveryKernelHasACase(t *testing.T) {
	specs := kernelSpecs()
	for _, key := range hal.Kernels() {
		if key == hal.KernelCopy {
			continue
		}
		if spec, ok := specs[key]; assert.True(t, ok, "no case for kernel %s", key) {
			assert.NotNil(t, spec.test, key)
			assert.NotNil(t, spec.probe, key)
		}
	}
	assert.Len(t, specs, len(hal.Kernels())-1, "a case for a kernel the table does not declare")
}
