//go:build cgo || (js && wasm)

package device

import (
	"math/bits"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
)

// Allocation is a native buffer, or a window of one. A real one lives
// until the device closes: released tensors return it to the pool, never
// to the driver, so a handle captured by a command still being recorded
// stays valid.
type Allocation struct {
	handle   webgpu.Buffer
	capacity int64
	// A window is a transient allocation that binds bytes
	// [base, base+capacity) of root's buffer; root is nil for a real one.
	base int64
	root *Allocation
}

// Capacity is the bytes the allocation holds (a window: the bytes it binds).
func (a *Allocation) Capacity() int64 { return a.capacity }

// Base is the byte offset of a window in its root's buffer; 0 for a real
// allocation.
func (a *Allocation) Base() int64 { return a.base }

// Origin is the buffer an allocation binds: itself, or a window's root.
func (a *Allocation) Origin() *Allocation {
	if a.root != nil {
		return a.root
	}
	return a
}

// Window returns a transient allocation binding size bytes of a's buffer
// from byte base of a (a may itself be a window). A kernel that binds it
// sees those bytes at offset 0; the window is never freed or pooled.
func (a *Allocation) Window(base, size int64) *Allocation {
	return &Allocation{handle: a.handle, capacity: size, base: a.base + base, root: a.Origin()}
}

// SizeClass rounds a request up so that freed buffers can serve later
// requests of similar size: powers of two up to 64 MiB, then multiples of
// 16 MiB, which bounds the waste at half a buffer for small sizes and 16 MiB
// for large ones.
func SizeClass(size int64) int64 {
	const minClass, linearFrom, linearStep = 256, 64 << 20, 16 << 20
	switch {
	case size <= minClass:
		return minClass
	case size <= linearFrom:
		return 1 << (64 - bits.LeadingZeros64(uint64(size-1)))
	default:
		return (size + linearStep - 1) / linearStep * linearStep
	}
}

// pool keeps free allocations by size class. The device mutex guards it.
type pool struct {
	free  map[int64][]*Allocation
	bytes int64
}

func (p *pool) get(class int64) *Allocation {
	list := p.free[class]
	if len(list) == 0 {
		return nil
	}
	a := list[len(list)-1]
	p.free[class] = list[:len(list)-1]
	p.bytes -= a.capacity
	return a
}

func (p *pool) put(a *Allocation) {
	if p.free == nil {
		p.free = map[int64][]*Allocation{}
	}
	p.free[a.capacity] = append(p.free[a.capacity], a)
	p.bytes += a.capacity
}

// drain empties the pool and returns what it held.
func (p *pool) drain() []*Allocation {
	var out []*Allocation
	for _, list := range p.free {
		out = append(out, list...)
	}
	p.free, p.bytes = nil, 0
	return out
}
