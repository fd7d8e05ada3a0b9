package hal

import "fmt"

// IndexError is the error every backend reports when a gather or scatter
// kernel meets an index outside its axis (Gather, and the IndexSelect,
// Embedding and ScatterAdd built on these kernels): one type with one
// wording, so that the same bad input reads the same on every device. It
// wraps ErrIndexOutOfRange. Which element held the index is not part of
// it: a GPU kernel records only the first bad value it meets, in no
// defined order.
type IndexError struct {
	Op    string // the kernel: "gather" or "scatter_add"
	Index int    // the offending index
	Axis  int    // the indexed axis
	Size  int    // that axis's size
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("%s: index %d is out of range for axis %d of size %d: %v", e.Op, e.Index, e.Axis, e.Size, ErrIndexOutOfRange)
}

// Unwrap makes errors.Is(err, ErrIndexOutOfRange) hold.
func (e *IndexError) Unwrap() error { return ErrIndexOutOfRange }
