package cpu

import (
	"unsafe"

	"github.com/x448/float16"
)

// buffer is a CPU allocation. Its fields other than dev and size are
// guarded by dev.mu.
type buffer struct {
	dev  *Device
	size int64    // bytes requested from Alloc
	data []uint64 // ceil(size/8) words; nil once freed
}

func (b *buffer) Size() int64 { return b.size }

// The backing store is []uint64 so that every element type, float64
// included, is naturally aligned at any element offset; the kernels see it
// through the typed slices below, which alias the same memory. Every Go
// port that webtensor targets is little-endian, so these are also the
// bytes that Write and Read copy.

func asType[T any](words []uint64) []T {
	var zero T
	n := len(words) * 8 / int(unsafe.Sizeof(zero))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

func bytesOf(words []uint64) []byte { return asType[byte](words) }

// storage is the set of element types a buffer holds, one per hal.DType.
type storage interface {
	float32 | float64 | int32 | float16.Float16 | int64
}
