package mpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/webtensor/webtensor/nn/parallel"
)

// spinFor is how long a collective is polled without sleeping.
const spinFor = 20 * time.Millisecond

// DefaultTimeout is a new Comm's Timeout.
const DefaultTimeout = 5 * time.Minute

// Error is a failed MPI call.
type Error struct {
	Op      string // "Init", "AllReduce", "Broadcast", "Barrier", "Finalize"
	Rank    int    // this process's rank, -1 before Init knows it
	Code    int    // MPI's error code, 0 for a timeout or misuse
	Msg     string // MPI's error string, or what went wrong
	Timeout bool   // the collective did not complete within Comm.Timeout
}

func (e *Error) Error() string {
	return fmt.Sprintf("mpi: %s on rank %d: %s", e.Op, e.Rank, e.Msg)
}

// Comm is MPI_COMM_WORLD of this process. Its methods may be called from
// any goroutine; they run one at a time on the MPI thread.
type Comm struct {
	// Timeout bounds each collective (0: wait forever). Set it before
	// using the Comm from several goroutines.
	Timeout time.Duration

	rank, size int
	calls      chan func()
	mu         sync.Mutex // one call at a time through do
	bmu        sync.Mutex // guards broken, which the MPI thread sets while polling
	broken     error      // a timed-out collective or Finalize: later calls fail with it

	pending []*pending // non-blocking all-reduces in flight; the MPI thread's alone
}

// pending is a non-blocking all-reduce the MPI thread polls between calls.
type pending struct {
	op     string
	req    *request // an allocation of its own: cgo refuses a pointer into a struct holding Go pointers
	began  time.Time
	finish func() // copies the result to the caller's buffer and frees the C copy
	drop   func() // frees the C copy after a failure (never after a timeout: MPI may still write it)
	q      *Request
}

// Request is a non-blocking all-reduce in flight: a parallel.Request.
type Request struct {
	done chan struct{}
	err  error
}

// Wait returns when the all-reduce has completed, failed or timed out.
func (q *Request) Wait() error {
	<-q.done
	return q.err
}

func (c *Comm) brokenErr() error {
	c.bmu.Lock()
	defer c.bmu.Unlock()
	return c.broken
}

// breakWith makes err the reason every later call fails, unless there is
// one already.
func (c *Comm) breakWith(err error) {
	c.bmu.Lock()
	defer c.bmu.Unlock()
	if c.broken == nil {
		c.broken = err
	}
}

var initOnce struct {
	sync.Mutex
	done bool
}

// Init initializes MPI (once per process: MPI cannot be initialized again
// after Finalize) and returns the world communicator, after opening the
// Open MPI library (Load): without one it returns Load's *LoadError,
// which matches ErrUnavailable. Outside mpirun a process is rank 0 of 1
// (Open MPI's singleton mode).
func Init() (*Comm, error) {
	initOnce.Lock()
	defer initOnce.Unlock()
	if initOnce.done {
		return nil, &Error{Op: "Init", Rank: -1, Msg: "MPI was already initialized in this process"}
	}
	if _, err := Load(); err != nil {
		return nil, err
	}
	setDefaultEnv("OMPI_MCA_opal_signal", "")
	setDefaultEnv("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
	c := &Comm{Timeout: DefaultTimeout, calls: make(chan func())}
	started := make(chan error)
	go c.serve(started)
	if err := <-started; err != nil {
		return nil, err
	}
	initOnce.done = true
	return c, nil
}

func setDefaultEnv(key, value string) {
	if _, ok := os.LookupEnv(key); !ok {
		os.Setenv(key, value)
	}
}

// serve is the MPI thread: it initializes MPI, then runs every call.
func (c *Comm) serve(started chan<- error) {
	runtime.LockOSThread()
	rank, size, code, msg := cInit()
	if code != 0 {
		started <- &Error{Op: "Init", Rank: -1, Code: code, Msg: msg}
		return
	}
	c.rank, c.size = rank, size
	started <- nil
	for {
		if len(c.pending) == 0 {
			f, ok := <-c.calls
			if !ok {
				return
			}
			f()
			continue
		}
		// Non-blocking all-reduces progress only while MPI is called:
		// poll them between calls, hot for a while, then gently (see
		// collective).
		select {
		case f, ok := <-c.calls:
			if !ok {
				return
			}
			f()
		default:
			oldest := c.pending[0].began
			c.poll()
			if time.Since(oldest) < spinFor {
				runtime.Gosched()
			} else {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
}

// poll tests every pending all-reduce once, completing those MPI has
// finished and failing those past the timeout. It runs on the MPI thread.
func (c *Comm) poll() {
	keep := c.pending[:0]
	for _, p := range c.pending {
		done, code, msg := cTest(p.req)
		switch {
		case code != 0:
			p.drop()
			p.q.err = &Error{Op: p.op, Rank: c.rank, Code: code, Msg: msg}
		case done:
			p.finish()
		case c.Timeout > 0 && time.Since(p.began) > c.Timeout:
			err := &Error{Op: p.op, Rank: c.rank, Timeout: true, Msg: fmt.Sprintf("not complete after %v: another rank failed or never joined", c.Timeout)}
			c.breakWith(err)
			p.q.err = err
		default:
			keep = append(keep, p)
			continue
		}
		close(p.q.done)
	}
	clear(c.pending[len(keep):])
	c.pending = keep
}

// Rank is this process's rank in [0, Size).
func (c *Comm) Rank() int { return c.rank }

// Size is the number of processes.
func (c *Comm) Size() int { return c.size }

// do runs f on the MPI thread, unless the Comm is broken.
func (c *Comm) do(op string, f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if broken := c.brokenErr(); broken != nil {
		return &Error{Op: op, Rank: c.rank, Msg: "the communicator is unusable: " + broken.Error()}
	}
	done := make(chan error)
	c.calls <- func() { done <- f() }
	return <-done
}

// collective starts a non-blocking collective on a C copy of buf and polls
// it until it completes or the timeout passes. It runs on the MPI thread.
func (c *Comm) collective(op string, start func() (request, int, string), finish func()) error {
	req, code, msg := start()
	if code != 0 {
		return &Error{Op: op, Rank: c.rank, Code: code, Msg: msg}
	}
	began := time.Now()
	var deadline time.Time
	if c.Timeout > 0 {
		deadline = began.Add(c.Timeout)
	}
	for {
		done, code, msg := cTest(&req)
		if code != 0 {
			return &Error{Op: op, Rank: c.rank, Code: code, Msg: msg}
		}
		if done {
			finish()
			return nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			err := &Error{Op: op, Rank: c.rank, Timeout: true, Msg: fmt.Sprintf("not complete after %v: another rank failed or never joined", c.Timeout)}
			c.breakWith(err)
			return err
		}
		// Poll hot for a while (a sleeping rank delays the shared-memory
		// transport's progress: sleeping from the start made a 38 kB
		// all-reduce between two local ranks 6× slower), then gently.
		if time.Since(began) < spinFor {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// AllReduceFloat32 replaces buf, on every rank, by the elementwise sum of
// every rank's buf. All ranks must pass the same length.
func (c *Comm) AllReduceFloat32(buf []float32) error {
	return c.do("AllReduce", func() error { return c.run("AllReduce", float32s(buf), -1) })
}

// AllReduceFloat64 is AllReduceFloat32 for float64.
func (c *Comm) AllReduceFloat64(buf []float64) error {
	return c.do("AllReduce", func() error { return c.run("AllReduce", float64s(buf), -1) })
}

// IAllReduceFloat32 starts AllReduceFloat32 and returns at once; buf must
// not be touched until the Request's Wait returns. The MPI thread polls
// the all-reduce (MPI_Test) between other calls, so that it progresses
// while the caller computes, and fails it after Timeout. All-reduces
// complete in the order they were started, blocking ones included.
func (c *Comm) IAllReduceFloat32(buf []float32) (parallel.Request, error) {
	return c.iallReduce(float32s(buf))
}

// IAllReduceFloat64 is IAllReduceFloat32 for float64.
func (c *Comm) IAllReduceFloat64(buf []float64) (parallel.Request, error) {
	return c.iallReduce(float64s(buf))
}

func (c *Comm) iallReduce(b hostBuffer) (parallel.Request, error) {
	q := &Request{done: make(chan struct{})}
	if err := c.do("AllReduce", func() error { return c.startAllReduce(b, q) }); err != nil {
		return nil, err
	}
	return q, nil
}

// BroadcastFloat32 replaces buf, on every rank, by root's buf.
func (c *Comm) BroadcastFloat32(buf []float32, root int) error {
	return c.broadcast(float32s(buf), root)
}

// BroadcastFloat64 is BroadcastFloat32 for float64.
func (c *Comm) BroadcastFloat64(buf []float64, root int) error {
	return c.broadcast(float64s(buf), root)
}

func (c *Comm) broadcast(b hostBuffer, root int) error {
	if root < 0 || root >= c.size {
		return &Error{Op: "Broadcast", Rank: c.rank, Msg: fmt.Sprintf("root %d outside [0, %d)", root, c.size)}
	}
	return c.do("Broadcast", func() error { return c.run("Broadcast", b, root) })
}

// Barrier returns when every rank has entered it.
func (c *Comm) Barrier() error {
	return c.do("Barrier", func() error {
		return c.collective("Barrier", func() (request, int, string) { return cIbarrier() }, func() {})
	})
}

// Abort ends every process of the job with code (MPI_Abort). It does not
// return.
func (c *Comm) Abort(code int) {
	c.calls <- func() { cAbort(code) }
	select {}
}

// Finalize shuts MPI down; the Comm is unusable afterwards. Every rank
// must call it before exiting normally.
func (c *Comm) Finalize() error {
	err := c.do("Finalize", func() error {
		if code, msg := cFinalize(); code != 0 {
			return &Error{Op: "Finalize", Rank: c.rank, Code: code, Msg: msg}
		}
		return nil
	})
	c.mu.Lock()
	if c.brokenErr() == nil {
		c.breakWith(errors.New("finalized"))
		close(c.calls)
	}
	c.mu.Unlock()
	return err
}

// hostBuffer is the caller's slice of a collective: float32 or float64.
type hostBuffer struct {
	f32 []float32
	f64 []float64
}

func float32s(b []float32) hostBuffer { return hostBuffer{f32: b} }
func float64s(b []float64) hostBuffer { return hostBuffer{f64: b} }
