package cpu

import "math/bits"

// poolLimit caps the bytes the free lists hold. A training step frees and
// reallocates the same few shapes every iteration, so a pool a little
// larger than one step's temporaries serves nearly every Alloc; beyond the
// cap the least recently freed memory goes back to the garbage collector.
const poolLimit = 1 << 30

// wordClass rounds a request of n 8-byte words up so that freed buffers
// can serve later requests of similar size: powers of two up to 8M words
// (64 MiB), then multiples of 2M words (16 MiB). That bounds the waste at
// half a buffer for small sizes and 16 MiB for large ones, as the WebGPU
// backend's pool does.
func wordClass(n int64) int64 {
	const minClass, linearFrom, linearStep = 8, 8 << 20, 2 << 20
	switch {
	case n <= minClass:
		return minClass
	case n <= linearFrom:
		return 1 << (64 - bits.LeadingZeros64(uint64(n-1)))
	default:
		return (n + linearStep - 1) / linearStep * linearStep
	}
}

// pooled is a free block of memory and when it was freed.
type pooled struct {
	words []uint64
	seq   uint64
}

// pool keeps freed memory by size class, newest last in each list, so that
// a reuse takes the block most likely still in cache and eviction takes
// the oldest block of all, which heads one of the lists. The device mutex
// guards it.
type pool struct {
	free  map[int64][]pooled
	bytes int64
	limit int64
	seq   uint64
}

func (p *pool) get(class int64) []uint64 {
	list := p.free[class]
	if len(list) == 0 {
		return nil
	}
	w := list[len(list)-1].words
	list[len(list)-1] = pooled{}
	p.free[class] = list[:len(list)-1]
	p.bytes -= int64(len(w)) * 8
	return w
}

// put keeps w (whose length is its class) for reuse, then evicts the
// least recently freed blocks while the pool holds more than its limit.
func (p *pool) put(w []uint64) {
	if p.free == nil {
		p.free = map[int64][]pooled{}
	}
	p.seq++
	class := int64(len(w))
	p.free[class] = append(p.free[class], pooled{words: w, seq: p.seq})
	p.bytes += class * 8
	for p.bytes > p.limit {
		p.evictOldest()
	}
}

// evictOldest drops the block freed longest ago. There are a few dozen
// classes at most, so a scan of the list heads is cheap next to the
// allocation that overflowed the pool.
func (p *pool) evictOldest() {
	var oldest int64 = -1
	for class, list := range p.free {
		if len(list) > 0 && (oldest < 0 || list[0].seq < p.free[oldest][0].seq) {
			oldest = class
		}
	}
	list := p.free[oldest]
	p.bytes -= oldest * 8
	list[0] = pooled{}
	if len(list) == 1 {
		delete(p.free, oldest)
	} else {
		p.free[oldest] = list[1:]
	}
}

// drain drops everything the pool holds.
func (p *pool) drain() { p.free, p.bytes = nil, 0 }
