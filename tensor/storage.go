package tensor

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/hal"
)

// storage is one device buffer shared by every view of it. Each live
// Tensor over it holds one reference; the buffer goes back to the device
// when the last one is released (explicitly or by a tensor's cleanup).
type storage struct {
	dev  hal.Device
	buf  hal.Buffer
	refs atomic.Int64
}

func newStorage(dev hal.Device, buf hal.Buffer) *storage {
	s := &storage{dev: dev, buf: buf}
	s.refs.Store(1)
	return s
}

func (s *storage) acquire() { s.refs.Add(1) }

// release drops one reference. It is the cleanup function of every
// tensor, so it must not refer to any tensor.
func (s *storage) release() {
	if s.refs.Add(-1) == 0 {
		s.dev.Free(s.buf)
	}
}
