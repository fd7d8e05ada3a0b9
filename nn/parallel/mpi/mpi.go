package mpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// ErrNotBuilt is returned by Init in a program built without MPI.
var ErrNotBuilt = errors.New("mpi: this program was built without MPI support: install Open MPI (apt-get install libopenmpi-dev openmpi-bin) and build with -tags mpi (and cgo)")

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
	mu         sync.Mutex
	broken     error // a timed-out collective or Finalize: later calls fail with it
}

var initOnce struct {
	sync.Mutex
	done bool
}

// Init initializes MPI (once per process: MPI cannot be initialized again
// after Finalize) and returns the world communicator. Outside mpirun a
// process is rank 0 of 1.
func Init() (*Comm, error) {
	initOnce.Lock()
	defer initOnce.Unlock()
	if initOnce.done {
		return nil, &Error{Op: "Init", Rank: -1, Msg: "MPI was already initialized in this process"}
	}
	if !built {
		return nil, ErrNotBuilt
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
	for f := range c.calls {
		f()
	}
}

// Rank is this process's rank in [0, Size).
func (c *Comm) Rank() int { return c.rank }

// Size is the number of processes.
func (c *Comm) Size() int { return c.size }

// do runs f on the MPI thread, unless the Comm is broken.
func (c *Comm) do(op string, f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return &Error{Op: op, Rank: c.rank, Msg: "the communicator is unusable: " + c.broken.Error()}
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
			c.broken = err
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
	if c.broken == nil {
		c.broken = errors.New("finalized")
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
