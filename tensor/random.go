package tensor

import (
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Generator is a seedable source of random tensors. It draws from the
// counter-based Philox4x32-10 stream under key seed: element i of a draw
// is computed on the device from counter offset+i, and the offset then
// advances by the element count. So the stream depends only on the seed
// and the order of draws — every device produces the same values (Uniform
// and Bernoulli bit for bit; Normal up to the rounding of the device's
// ln, sqrt and cos) — and a draw can be replayed with SetOffset.
//
// A Generator may be used from several goroutines; draws are serialized.
type Generator struct {
	mu     sync.Mutex
	seed   uint64
	offset uint64
}

// NewGenerator returns a generator at the start of seed's stream.
func NewGenerator(seed uint64) *Generator { return &Generator{seed: seed} }

// Seed returns the generator's key.
func (g *Generator) Seed() uint64 { return g.seed }

// Offset returns the counter the next draw starts at.
func (g *Generator) Offset() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.offset
}

// SetOffset moves the generator to counter offset, for example to replay
// a draw.
func (g *Generator) SetOffset(offset uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.offset = offset
}

// Rand returns Float32 values uniform in [0, 1).
func (g *Generator) Rand(dev *Device, shape ...int) *Tensor {
	return g.draw("Rand", dev, hal.Uniform, 0, shape)
}

// Randn returns Float32 values from the standard normal distribution
// (Box–Muller).
func (g *Generator) Randn(dev *Device, shape ...int) *Tensor {
	return g.draw("Randn", dev, hal.Normal, 0, shape)
}

// Bernoulli returns Float32 values that are 1 with probability p, else 0.
func (g *Generator) Bernoulli(dev *Device, p float64, shape ...int) *Tensor {
	const op = "Bernoulli"
	if !(p >= 0 && p <= 1) {
		misuse(op, "probability %v is outside [0, 1]", p)
	}
	return g.draw(op, dev, hal.Bernoulli, p, shape)
}

func (g *Generator) draw(op string, dev *Device, dist hal.Distribution, p float64, shape []int) *Tensor {
	if g == nil {
		misuse(op, "nil generator")
	}
	checkDevice(op, dev)
	checkShape(op, shape)
	checkOp(op, dev, Float32)
	n := uint64(numElements(op, shape))
	g.mu.Lock()
	offset := g.offset
	g.offset += n
	g.mu.Unlock()
	return compute(op, dev, Float32, shape, nil, func(dst hal.View) error {
		return dev.hal.Random(dst, dist, p, g.seed, offset)
	})
}

var _ = registerOps(
	Op{Name: "Rand", Family: FamilyRandom, DTypes: onlyF32, Kernels: one(hal.Uniform.Kernel())},
	Op{Name: "Randn", Family: FamilyRandom, DTypes: onlyF32, Kernels: one(hal.Normal.Kernel())},
	Op{Name: "Bernoulli", Family: FamilyRandom, DTypes: onlyF32, Kernels: one(hal.Bernoulli.Kernel())},
)
