package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Helpers are goroutines that stay alive between parallel kernels and
// spin for a short while after each chunk before they park. A goroutine
// started per kernel, or a parked one, waits for the runtime to wake an
// idle OS thread, and on a virtual machine that can take longer than a
// memory-bound chunk of a few hundred microseconds: sum over 16M floats ran
// at 1.4× one thread's speed on two. A helper that is still spinning
// starts within a microsecond, as OpenMP's spinning threads do.

// helperSpin is how long an idle helper spins before it parks. Kernels of
// a training step follow each other closely; between bursts the cost is
// at most this much CPU time per helper.
const helperSpin = 200 * time.Microsecond

// chunkJob is one chunk handed to a helper.
type chunkJob struct {
	fn     func(k, lo, hi int)
	k      int
	lo, hi int
	done   *chunksDone
}

// chunksDone counts the chunks of one call still running: the caller
// spins on left while the helpers are likely to finish soon, then blocks
// on wg.
type chunksDone struct {
	left atomic.Int32
	wg   sync.WaitGroup
}

func (c *chunksDone) finish() {
	c.left.Add(-1)
	c.wg.Done()
}

func (j chunkJob) run() {
	j.fn(j.k, j.lo, j.hi)
	j.done.finish()
}

// helper states. A helper stays assigned while it runs its job, so a
// kernel that a job runs cannot hand a chunk to the helper running it.
const (
	helperIdle     = iota // spinning or parked, no job
	helperWriting         // an offer is filling the slot
	helperAssigned        // a job is in its slot or running
)

type helper struct {
	state  atomic.Int32
	job    chunkJob
	parked atomic.Bool
	wake   chan struct{}
}

var helpers struct {
	mu   sync.Mutex
	list []*helper
}

// helperList returns at least n helpers, starting any that are missing.
func helperList(n int) []*helper {
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	for len(helpers.list) < n {
		h := &helper{wake: make(chan struct{}, 1)}
		helpers.list = append(helpers.list, h)
		go h.loop()
	}
	return helpers.list[:n]
}

// offer gives j to h if h is idle and reports whether it took it.
func (h *helper) offer(j chunkJob) bool {
	if !h.state.CompareAndSwap(helperIdle, helperWriting) {
		return false
	}
	h.job = j
	h.state.Store(helperAssigned)
	if h.parked.Load() {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	return true
}

func (h *helper) loop() {
	for {
		spinUntil := time.Now().Add(helperSpin)
		for h.state.Load() != helperAssigned {
			if time.Now().After(spinUntil) {
				h.park()
				spinUntil = time.Now().Add(helperSpin)
			}
			runtime.Gosched()
		}
		j := h.job
		h.job = chunkJob{}
		j.run()
		h.state.Store(helperIdle)
	}
}

// park blocks until offer wakes h. parked is set before the state is
// checked again, so an offer either sees parked and sends, or lands
// before the check.
func (h *helper) park() {
	h.parked.Store(true)
	if h.state.Load() != helperAssigned {
		<-h.wake
	}
	h.parked.Store(false)
	select { // drop a wake-up that raced with the check above
	case <-h.wake:
	default:
	}
}

// runChunks runs fn on each chunk, the last on the caller and the others
// on idle helpers (or new goroutines when every helper is busy, as when
// several goroutines run kernels at once), and returns when all are done.
func runChunks(bounds [][2]int, fn func(k, lo, hi int)) {
	last := len(bounds) - 1
	done := new(chunksDone)
	done.left.Store(int32(last))
	done.wg.Add(last)
	hs := helperList(last)
	for k := range last {
		j := chunkJob{fn: fn, k: k, lo: bounds[k][0], hi: bounds[k][1], done: done}
		if !hs[k].offer(j) {
			go j.run()
		}
	}
	fn(last, bounds[last][0], bounds[last][1])
	spinUntil := time.Now().Add(helperSpin)
	for done.left.Load() > 0 && time.Now().Before(spinUntil) {
		runtime.Gosched()
	}
	done.wg.Wait()
}
