package tensor

import (
	"sync"
	"sync/atomic"
)

// PlacementCounters say what placement did since the last
// ResetPlacementStats. Ops counted are the routed ops of every policy but
// Explicit, which routes nothing.
type PlacementCounters struct {
	Ops        map[string]int64 // routed ops by the device name they ran on
	Moves      int64            // operands copied to another device
	BytesMoved int64            // bytes of those copies
	KeptOnCPU  int64            // host data for a GPU that Auto kept on the CPU
	// OOMFallbacks counts ops that ran out of GPU memory and ran again on
	// the CPU (Auto, MinimizeTransfers; see oom.go). Their operand copies
	// count in Moves and BytesMoved, the rerun in Ops.
	OOMFallbacks int64
}

var placementStats struct {
	ops                     sync.Map // *Device → *atomic.Int64
	moves, bytes, keptOnCPU atomic.Int64
	oomFallbacks            atomic.Int64
}

func countOp(dev *Device) {
	c, ok := placementStats.ops.Load(dev)
	if !ok {
		c, _ = placementStats.ops.LoadOrStore(dev, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

func countMove(t *Tensor) {
	placementStats.moves.Add(1)
	placementStats.bytes.Add(int64(t.Len()) * int64(t.dtype.Size()))
}

// PlacementStats returns the placement counters.
func PlacementStats() PlacementCounters {
	s := PlacementCounters{
		Ops:          map[string]int64{},
		Moves:        placementStats.moves.Load(),
		BytesMoved:   placementStats.bytes.Load(),
		KeptOnCPU:    placementStats.keptOnCPU.Load(),
		OOMFallbacks: placementStats.oomFallbacks.Load(),
	}
	placementStats.ops.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n != 0 {
			s.Ops[k.(*Device).name] = n
		}
		return true
	})
	return s
}

// ResetPlacementStats zeroes the placement counters.
func ResetPlacementStats() {
	placementStats.ops.Range(func(_, v any) bool {
		v.(*atomic.Int64).Store(0)
		return true
	})
	placementStats.moves.Store(0)
	placementStats.bytes.Store(0)
	placementStats.keptOnCPU.Store(0)
	placementStats.oomFallbacks.Store(0)
}
