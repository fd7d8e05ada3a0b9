package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Helpers are goroutines that stay alive between parallel kernels and
// spin for a short while after each kernel before they park. A goroutine
// started per kernel, or a parked one, waits for the runtime to wake an
// idle OS thread, and on a virtual machine that can take longer than a
// memory-bound chunk of a few hundred microseconds: sum over 16M floats ran
// at 1.4× one thread's speed on two. A helper that is still spinning
// starts within a microsecond, as OpenMP's spinning threads do.
//
// How they spin (issue 17). A waiter (an idle helper, or a caller whose
// chunks are still running on helpers) polls one atomic word with a few
// PAUSE instructions between polls (cpuPause) and reads the clock only
// every spinClockEvery polls. It calls runtime.Gosched only once per
// spinYield and parks (helpers) or blocks (callers) after helperSpin. An
// earlier spin called Gosched on every poll: Gosched puts the goroutine
// on the global run queue under the scheduler's lock, and at 16 threads
// the spinning helpers spent 18% of the CPU in goschedImpl and 11–15% in
// runtime.lock2 contending for that lock with the workers. Polling with
// PAUSE touches nothing shared until the polled word changes. The rare
// yield is still needed: with more goroutines than Ps (GOMAXPROCS above
// the core count, concurrent callers, -race) a goroutine that the waiter
// waits on may sit in its P's run queue, and without a yield only the
// runtime's 10 ms preemption would let it run. And spinning only pays
// while every spinning thread has a core of its own: when a call has more
// chunks than the machine has cores (GOMAXPROCS above the core count), its
// waiters park at once instead (spinFor), leaving the cores to the
// threads that still have chunks to run. (The old Gosched spin did that
// by accident: its threads slept in the kernel on the contended lock.)
//
// How chunks are handed out. A call's chunks form one chunkSet; the
// caller offers the set to up to chunks-1 idle helpers and then works on
// it too. Each participant first runs its own chunk (helper i of the call
// chunk i, the caller the last, so that a chunk runs where the same chunk
// of the previous kernel did and finds its data in that core's cache),
// then claims chunks in order through one shared counter until none are
// left, skipping those already taken. Helpers that start late (parked, or
// all busy with another caller's kernel) simply claim fewer chunks, the
// caller's share included, so no chunk ever waits for a goroutine to be
// started or woken, and nested or concurrent calls need no new
// goroutines: chunks nobody else claims run on the caller. The price is
// that a chunk must never wait for another chunk of the same call (they
// may run one after the other on one goroutine); a barrier is the end of
// one parallelChunks call.

const (
	// helperSpin is how long an idle helper spins before it parks, and a
	// caller before it blocks. Kernels of a training step follow each
	// other closely; between bursts the cost is at most this much CPU
	// time per helper.
	helperSpin = 200 * time.Microsecond
	// spinYield is how often a spinning goroutine lets the Go scheduler
	// run whatever else waits for its P.
	spinYield = 50 * time.Microsecond
	// spinPauses is how many PAUSEs a waiter runs between polls: from
	// some 10 ns (older cores) to 0.2 µs (Skylake and later, whose PAUSE
	// takes about 140 cycles), short against handing out a chunk.
	spinPauses = 4
	// spinClockEvery is how many polls pass between clock reads.
	spinClockEvery = 32
)

// spinFor is how long the waiters of a call with the given number of
// chunks spin: helperSpin, or nothing when there are more chunks than
// cores, as then a spinning thread takes a core from one with work.
func spinFor(chunks int) time.Duration {
	if chunks > runtime.NumCPU() {
		return 0
	}
	return helperSpin
}

// spinUntil polls done, pausing the core between polls and yielding to
// the scheduler every spinYield, until done reports true (then it returns
// true) or spin has passed (then it returns false).
func spinUntil(done func() bool, spin time.Duration) bool {
	if spin <= 0 {
		return done()
	}
	start := time.Now()
	yieldAt := spinYield
	for {
		for range spinClockEvery {
			if done() {
				return true
			}
			cpuPause(spinPauses)
		}
		since := time.Since(start)
		if since >= spin {
			return done()
		}
		if since >= yieldAt {
			runtime.Gosched()
			yieldAt = since + spinYield
		}
	}
}

// chunkSet is the chunks of one parallelChunks call, claimed by the
// caller and the helpers it was offered to.
type chunkSet struct {
	fn      func(k, lo, hi int)
	bounds  [][2]int
	claimed []atomic.Bool // chunk k is taken
	few     [16]atomic.Bool
	next    atomic.Int32 // where the claims after a participant's own chunk go on
	left    atomic.Int32 // chunks not yet finished, which the caller polls
	wg      sync.WaitGroup
}

func newChunkSet(bounds [][2]int, fn func(k, lo, hi int)) *chunkSet {
	s := &chunkSet{fn: fn, bounds: bounds}
	if len(bounds) <= len(s.few) {
		s.claimed = s.few[:len(bounds)]
	} else {
		s.claimed = make([]atomic.Bool, len(bounds))
	}
	s.left.Store(int32(len(bounds)))
	s.wg.Add(len(bounds))
	return s
}

// work runs chunk own first, unless someone took it, then every chunk
// still unclaimed. Owning a chunk keeps chunk k on the same helper call
// after call, as consecutive kernels cut the same range alike: the data
// one kernel wrote is still in that core's cache for the next.
func (s *chunkSet) work(own int) {
	s.run(own)
	for {
		k := int(s.next.Add(1)) - 1
		if k >= len(s.bounds) {
			return
		}
		s.run(k)
	}
}

// run runs chunk k if it is not claimed yet.
func (s *chunkSet) run(k int) {
	if s.claimed[k].Load() || !s.claimed[k].CompareAndSwap(false, true) {
		return
	}
	s.fn(k, s.bounds[k][0], s.bounds[k][1])
	// Done before the decrement: a caller that sees left reach 0 finds wg
	// at 0 too, so its Wait never blocks.
	s.wg.Done()
	s.left.Add(-1)
}

func (s *chunkSet) finished() bool { return s.left.Load() == 0 }

// helper states. A helper stays assigned while it works on a set, so a
// kernel that its chunk runs cannot offer the helper work.
const (
	helperIdle     = iota // spinning or parked, no set
	helperWriting         // an offer is filling the slot
	helperAssigned        // a set is in its slot or being worked on
)

type helper struct {
	state  atomic.Int32
	set    *chunkSet
	own    int // the chunk of set that h runs first
	parked atomic.Bool
	wake   chan struct{}
	// Each helper polls its own state: padding keeps one helper's writes
	// from evicting the line another helper polls.
	_ [64]byte
}

func (h *helper) assigned() bool { return h.state.Load() == helperAssigned }

// helpers is the pool: a snapshot that only grows, read without a lock.
var helpers struct {
	mu   sync.Mutex // held while growing
	list atomic.Pointer[[]*helper]
}

// helperList returns a pool of at least n helpers, starting any that are
// missing.
func helperList(n int) []*helper {
	if l := helpers.list.Load(); l != nil && len(*l) >= n {
		return *l
	}
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	var list []*helper
	if l := helpers.list.Load(); l != nil {
		list = *l
	}
	if len(list) >= n {
		return list
	}
	list = append(list[:len(list):len(list)], make([]*helper, n-len(list))...)
	for i := range list {
		if list[i] == nil {
			list[i] = &helper{wake: make(chan struct{}, 1)}
			go list[i].loop()
		}
	}
	helpers.list.Store(&list)
	return list
}

// offer gives s to h if h is idle and reports whether it took it. The
// caller then wakes h if it is parked (see wakeIfParked).
func (h *helper) offer(s *chunkSet, own int) bool {
	if !h.state.CompareAndSwap(helperIdle, helperWriting) {
		return false
	}
	h.set, h.own = s, own
	h.state.Store(helperAssigned)
	return true
}

// wakeIfParked wakes h after an offer. It reads parked after the offer
// stored helperAssigned, which park relies on.
func (h *helper) wakeIfParked() {
	if h.parked.Load() {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

func (h *helper) loop() {
	spin := helperSpin
	for {
		// A wake-up left over from an earlier race can end park without
		// a set: spin and park again then.
		for !spinUntil(h.assigned, spin) {
			h.park()
		}
		s := h.set
		h.set = nil
		s.work(h.own)
		spin = spinFor(len(s.bounds))
		h.state.Store(helperIdle)
	}
}

// park blocks until an offer wakes h. parked is set before the state is
// checked again, so an offer either sees parked and sends, or lands
// before the check.
func (h *helper) park() {
	h.parked.Store(true)
	if !h.assigned() {
		<-h.wake
	}
	h.parked.Store(false)
	select { // drop a wake-up that raced with the check above
	case <-h.wake:
	default:
	}
}

// runChunks runs fn on each chunk, on the caller and on up to
// len(bounds)-1 idle helpers, and returns when all are done.
func runChunks(bounds [][2]int, fn func(k, lo, hi int)) {
	s := newChunkSet(bounds, fn)
	// Offer first to every idle helper, so that the spinning ones start at
	// once, then wake the parked ones, which costs a system call each.
	var buf [64]*helper
	taken := buf[:0]
	for _, h := range helperList(len(bounds) - 1) {
		if len(taken) == len(bounds)-1 {
			break
		}
		if h.offer(s, len(taken)) {
			taken = append(taken, h)
		}
	}
	for _, h := range taken {
		h.wakeIfParked()
	}
	s.work(len(bounds) - 1)
	if !spinUntil(s.finished, spinFor(len(bounds))) {
		s.wg.Wait()
	}
}
