//go:build cgo

package wgpu

import (
	"math/bits"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
)

// allocation is a native buffer. It lives until the device closes:
// released tensors return it to the pool, never to the driver, so a handle
// captured by a command still being recorded stays valid.
type allocation struct {
	handle   webgpu.Buffer
	capacity int64
	// A window (chunk.go) is a transient allocation that binds bytes
	// [base, base+capacity) of root's buffer; root is nil for a real one.
	base int64
	root *allocation
}

// sizeClass rounds a request up so that freed buffers can serve later
// requests of similar size: powers of two up to 64 MiB, then multiples of
// 16 MiB, which bounds the waste at half a buffer for small sizes and 16 MiB
// for large ones.
func sizeClass(size int64) int64 {
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
	free  map[int64][]*allocation
	bytes int64
}

func (p *pool) get(class int64) *allocation {
	list := p.free[class]
	if len(list) == 0 {
		return nil
	}
	a := list[len(list)-1]
	p.free[class] = list[:len(list)-1]
	p.bytes -= a.capacity
	return a
}

func (p *pool) put(a *allocation) {
	if p.free == nil {
		p.free = map[int64][]*allocation{}
	}
	p.free[a.capacity] = append(p.free[a.capacity], a)
	p.bytes += a.capacity
}

// drain empties the pool and returns what it held.
func (p *pool) drain() []*allocation {
	var out []*allocation
	for _, list := range p.free {
		out = append(out, list...)
	}
	p.free, p.bytes = nil, 0
	return out
}
