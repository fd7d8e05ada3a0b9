package tensor

import (
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// philox is Philox4x32-10 (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3"), written from the paper as the tests' reference.
func philox(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
	for r := range 10 {
		if r > 0 {
			key[0] += w0
			key[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

func philoxBlock(seed, counter uint64) [4]uint32 {
	return philox([4]uint32{uint32(counter), uint32(counter >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

func TestPhiloxKnownAnswers(t *testing.T) {
	// Random123's known-answer vectors.
	assert.Equal(t, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}, philox([4]uint32{}, [2]uint32{}))
	assert.Equal(t, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
		philox([4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, [2]uint32{^uint32(0), ^uint32(0)}))
	assert.Equal(t, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
		philox([4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}))
}

func TestGenerator(t *testing.T) { forEachDevice(t, testGenerator) }

func testGenerator(t *testing.T, dev *Device) {
	const seed = 0x1234_5678_9abc_def0
	g := NewGenerator(seed)
	for _, op := range []string{"Rand", "Randn", "Bernoulli"} {
		if !Supports(dev, op, Float32) {
			t.Skipf("%v lacks %s", dev, op)
		}
	}
	u := g.Rand(dev, 7, 150) // offsets 0 … 1049
	n := g.Randn(dev, 1025)  // 1050 …
	b := g.Bernoulli(dev, 0.3, 1000)
	defer releaseAll(u, n, b)
	assert.Equal(t, uint64(1050+1025+1000), g.Offset())

	// Uniform and Bernoulli are bit-identical to the reference; Normal up
	// to the device's ln, sqrt and cos.
	got := read64(t, u)
	for i, v := range got {
		w := philoxBlock(seed, uint64(i))
		require.Equal(t, float64(w[0]>>8)*0x1p-24, v, "uniform element %d", i)
	}
	normals := read64(t, n)
	for i, v := range normals {
		w := philoxBlock(seed, uint64(1050+i))
		u1, u2 := float64((w[0]>>8)+1)*0x1p-24, float64(w[1]>>8)*0x1p-24
		want := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		require.InDelta(t, want, v, 4e-6*math.Max(1, math.Abs(want)), "normal element %d", i)
	}
	ones := 0.0
	for i, v := range read64(t, b) {
		w := philoxBlock(seed, uint64(2075+i))
		require.Equal(t, boolean(w[0]>>8 < uint32(math.Round(0.3*(1<<24)))), v, "bernoulli element %d", i)
		ones += v
	}
	assert.InDelta(t, 300, ones, 60)

	// Replaying an offset replays the draw; another seed draws otherwise.
	g.SetOffset(0)
	again := g.Rand(dev, 1050)
	other := NewGenerator(seed+1).Rand(dev, 1050)
	defer releaseAll(again, other)
	assert.Equal(t, got, read64(t, again))
	assert.NotEqual(t, got, read64(t, other))
}

func TestGeneratorErrors(t *testing.T) {
	dev := openCPU(t)
	var nilGen *Generator
	assert.Equal(t, "tensor: Bernoulli: probability 1.5 is outside [0, 1]",
		panicMessage(t, func() { NewGenerator(1).Bernoulli(dev, 1.5, 3) }))
	assert.Equal(t, "tensor: Rand: nil generator", panicMessage(t, func() { nilGen.Rand(dev, 3) }))
	assert.Equal(t, "tensor: Randn: negative dimension in shape [-3]", panicMessage(t, func() { NewGenerator(1).Randn(dev, -3) }))
}
