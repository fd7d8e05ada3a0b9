package placement

import "sync/atomic"

// Counters say what placement did since the last ResetStats; see
// tensor.PlacementCounters.
type Counters struct {
	Ops        map[string]int64 // routed ops by the device name they ran on
	Moves      int64            // operands copied to another device
	BytesMoved int64            // bytes of those copies
	KeptOnCPU  int64            // host data for a GPU that Auto kept on the CPU
	// OOMFallbacks counts ops that ran out of GPU memory and ran again on
	// the CPU (Auto, MinimizeTransfers; see onCPUIfOOM). Their operand
	// copies count in Moves and BytesMoved, the rerun in Ops.
	OOMFallbacks int64
}

func (r *Router[D, T]) countOp(dev D) {
	c, ok := r.stats.ops.Load(dev)
	if !ok {
		c, _ = r.stats.ops.LoadOrStore(dev, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

func (r *Router[D, T]) countMove(t T) {
	r.stats.moves.Add(1)
	r.stats.bytes.Add(tensorBytes[D](t))
}

// Stats returns the counters.
func (r *Router[D, T]) Stats() Counters {
	s := Counters{
		Ops:          map[string]int64{},
		Moves:        r.stats.moves.Load(),
		BytesMoved:   r.stats.bytes.Load(),
		KeptOnCPU:    r.stats.keptOnCPU.Load(),
		OOMFallbacks: r.stats.oomFallbacks.Load(),
	}
	r.stats.ops.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n != 0 {
			s.Ops[k.(D).Name()] = n
		}
		return true
	})
	return s
}

// ResetStats zeroes the counters.
func (r *Router[D, T]) ResetStats() {
	r.stats.ops.Range(func(_, v any) bool {
		v.(*atomic.Int64).Store(0)
		return true
	})
	r.stats.moves.Store(0)
	r.stats.bytes.Store(0)
	r.stats.keptOnCPU.Store(0)
	r.stats.oomFallbacks.Store(0)
}
