package parallel

import (
	"fmt"
	"sync"
)

// NewLocalGroup returns size Communicators that are ranks 0 … size−1 of
// one in-process group, for running Distributed on goroutines (tests, or
// a machine without MPI). Each rank must be used by one goroutine; the
// collectives of all ranks meet, and sum in rank order, so results are
// the same on every rank and from run to run.
func NewLocalGroup(size int) []Communicator {
	g := &localGroup{size: size, bufs: make([]any, size)}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Communicator, size)
	for r := range out {
		out[r] = &localRank{g: g, rank: r}
	}
	return out
}

type localGroup struct {
	size    int
	mu      sync.Mutex
	cond    *sync.Cond
	bufs    []any // each rank's buffer in the current collective
	arrived int
	left    int // ranks still to copy the result out
	round   uint64
}

type localRank struct {
	g    *localGroup
	rank int

	// last is closed when this rank's latest collective has completed:
	// collectives, blocking or not, run one after the other in the order
	// they were issued, as MPI's.
	mu   sync.Mutex
	last chan struct{}
}

// localRequest is a local collective in flight.
type localRequest struct {
	done chan struct{}
	err  error
}

func (q *localRequest) Wait() error {
	<-q.done
	return q.err
}

// start runs f on a goroutine once this rank's previous collectives have
// completed.
func (r *localRank) start(f func() error) *localRequest {
	q := &localRequest{done: make(chan struct{})}
	r.mu.Lock()
	prev := r.last
	r.last = q.done
	r.mu.Unlock()
	go func() {
		if prev != nil {
			<-prev
		}
		q.err = f()
		close(q.done)
	}()
	return q
}

func (r *localRank) Rank() int { return r.rank }
func (r *localRank) Size() int { return r.g.size }

func (r *localRank) AllReduceFloat32(buf []float32) error {
	return r.start(func() error { return meet(r, buf, -1) }).Wait()
}

func (r *localRank) AllReduceFloat64(buf []float64) error {
	return r.start(func() error { return meet(r, buf, -1) }).Wait()
}

func (r *localRank) IAllReduceFloat32(buf []float32) (Request, error) {
	return r.start(func() error { return meet(r, buf, -1) }), nil
}

func (r *localRank) IAllReduceFloat64(buf []float64) (Request, error) {
	return r.start(func() error { return meet(r, buf, -1) }), nil
}

func (r *localRank) BroadcastFloat64(buf []float64, root int) error {
	if root < 0 || root >= r.g.size {
		return fmt.Errorf("parallel: local group: broadcast root %d outside [0, %d)", root, r.g.size)
	}
	return r.start(func() error { return meet(r, buf, root) }).Wait()
}

// meet waits until every rank has entered the collective, computes the
// result from all buffers (the sum, or root's buffer), and waits until
// every rank has copied it before the next collective may start.
func meet[T float32 | float64](r *localRank, buf []T, root int) error {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.left > 0 { // the previous collective is still being read
		g.cond.Wait()
	}
	round := g.round
	g.bufs[r.rank] = buf
	g.arrived++
	if g.arrived == g.size {
		g.arrived, g.left = 0, g.size
		g.round++
		g.cond.Broadcast()
	}
	for g.round == round {
		g.cond.Wait()
	}
	var err error
	// Each rank computes its own copy of the result from the buffers,
	// which nobody writes until every rank has read them.
	result := make([]T, len(buf))
	for i, other := range g.bufs {
		o, ok := other.([]T)
		switch {
		case !ok || len(o) != len(buf):
			err = fmt.Errorf("parallel: local group: rank %d and rank %d passed different buffers to a collective", r.rank, i)
		case root < 0:
			for k, v := range o {
				result[k] += v
			}
		case i == root:
			copy(result, o)
		}
	}
	g.left--
	if g.left == 0 {
		clear(g.bufs)
		g.cond.Broadcast()
		if err == nil {
			copy(buf, result)
		}
		return err
	}
	// Wait for the others to have read the buffers before writing ours.
	for g.left > 0 && g.round == round+1 {
		g.cond.Wait()
	}
	if err == nil {
		copy(buf, result)
	}
	return err
}
