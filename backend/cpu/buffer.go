package cpu

import "unsafe"

// buffer is a CPU allocation. Its fields other than dev and size are
// guarded by dev.mu.
type buffer struct {
	dev  *Device
	size int64     // bytes requested from Alloc
	data []float32 // ceil(size/4) elements; nil once freed
}

func (b *buffer) Size() int64 { return b.size }

// bytesOf views s as its little-endian in-memory bytes, so Write and Read
// are a single memmove rather than a per-element conversion. Every Go port
// that webtensor targets is little-endian.
func bytesOf(s []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
}
