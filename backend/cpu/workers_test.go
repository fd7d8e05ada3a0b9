package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// covered runs parallelFor over n items and checks every item is visited
// exactly once.
func covered(t *testing.T, n, grain int, inner func()) {
	seen := make([]atomic.Int32, n)
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
		if inner != nil {
			inner()
		}
	})
	for i := range seen {
		if seen[i].Load() != 1 {
			require.Failf(t, "coverage", "item %d visited %d times", i, seen[i].Load())
		}
	}
}

// TestParallelForStress runs parallel kernels nested inside chunks, from
// many goroutines at once, and across GOMAXPROCS changes: each must cover
// its range exactly once and return, the helpers neither losing a wake-up
// nor waiting on themselves.
func TestParallelForStress(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	t.Run("nested", func(t *testing.T) {
		for range 200 {
			covered(t, 64, 1, func() { covered(t, 32, 1, func() { covered(t, 8, 1, nil) }) })
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 100 {
					covered(t, 1000, 10, nil)
				}
			}()
		}
		wg.Wait()
	})
	t.Run("gomaxprocs", func(t *testing.T) {
		for i := range 400 {
			runtime.GOMAXPROCS(1 + i%2*3)
			covered(t, 100, 1, nil)
			if i%50 == 0 {
				// Let the helpers park before the next offer.
				time.Sleep(2 * helperSpin)
			}
		}
	})
}

// kernelCheck is one device kernel whose result is compared with a
// float64 reference computed serially in the test.
type kernelCheck struct {
	name string
	run  func() error
	out  hal.View
	want []float64
	tol  func(want float64) float64
}

// verify runs c and reports a mismatch with t.Errorf, which, unlike
// require, may be called from any goroutine.
func (c kernelCheck) verify(t *testing.T, dev *Device) {
	if err := c.run(); err != nil {
		t.Errorf("%s: %v", c.name, err)
		return
	}
	raw := make([]byte, c.out.Buf.Size())
	if err := dev.Read(c.out.Buf, raw); err != nil {
		t.Errorf("%s: read: %v", c.name, err)
		return
	}
	got := decode(c.out.DType, raw)
	for i, w := range c.want {
		if math.Abs(got[i]-w) > c.tol(w) || math.IsNaN(got[i]) {
			t.Errorf("%s: element %d = %v, want %v", c.name, i, got[i], w)
			return
		}
	}
}

// parallelKernels builds, over shared random float32 inputs, checks of
// kernels that split across the workers at 16 threads and more: ReLU
// and Add over 1M+ elements, a 257×1000 softmax, a sum over 1M+ values
// and a 67×300·300×129 product. Each call gets its own outputs so that
// several goroutines can run the checks at once.
func parallelKernels(h harness, rng *rand.Rand) func() []kernelCheck {
	const n = 1<<20 + 3
	const rows, cols = 257, 1000
	const m, k, p = 67, 300, 129
	f32 := func(v []float64) []float64 {
		for i := range v {
			v[i] = float64(float32(v[i]))
		}
		return v
	}
	random := func(size int) []float64 {
		v := make([]float64, size)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return f32(v)
	}
	x, y, s := random(n), random(n), random(rows*cols)
	a, b := random(m*k), random(k*p)
	xv, yv := h.view(hal.Float32, x, n), h.view(hal.Float32, y, n)
	sv := h.view(hal.Float32, s, rows, cols)
	av, bv := h.view(hal.Float32, a, m, k), h.view(hal.Float32, b, k, p)

	relu, add := make([]float64, n), make([]float64, n)
	sum, absSum := 0.0, 0.0
	for i := range x {
		relu[i], add[i] = max(x[i], 0), float64(float32(x[i]+y[i]))
		sum += x[i]
		absSum += math.Abs(x[i])
	}
	soft := make([]float64, rows*cols)
	for r := range rows {
		row, top, total := s[r*cols:(r+1)*cols], math.Inf(-1), 0.0
		for _, v := range row {
			top = max(top, v)
		}
		for _, v := range row {
			total += math.Exp(v - top)
		}
		for j, v := range row {
			soft[r*cols+j] = math.Exp(v-top) / total
		}
	}
	prod, prodMag := make([]float64, m*p), 0.0
	for i := range m {
		for j := range p {
			for q := range k {
				prod[i*p+j] += a[i*k+q] * b[q*p+j]
				prodMag = max(prodMag, math.Abs(a[i*k+q]*b[q*p+j]))
			}
		}
	}
	exact := func(float64) float64 { return 0 }
	return func() []kernelCheck {
		reluOut, addOut := h.zeros(hal.Float32, n), h.zeros(hal.Float32, n)
		softOut, sumOut, prodOut := h.zeros(hal.Float32, rows, cols), h.zeros(hal.Float32), h.zeros(hal.Float32, m, p)
		return []kernelCheck{
			{"relu", func() error { return h.dev.Unary(hal.ReLU, reluOut, xv, hal.Args{}) }, reluOut, relu, exact},
			{"add", func() error { return h.dev.Binary(hal.Add, addOut, xv, yv) }, addOut, add, exact},
			{"softmax", func() error { return h.dev.Softmax(softOut, sv, false) }, softOut, soft,
				func(w float64) float64 { return 1e-5 * (w + 1e-6) }},
			{"sum", func() error { return h.dev.Reduce(hal.Sum, sumOut, xv, 1) }, sumOut, []float64{sum},
				func(float64) float64 { return 1e-6 * absSum }},
			{"matmul", func() error { return h.dev.MatMul(prodOut, av, bv, 1, 0) }, prodOut, prod,
				func(float64) float64 { return 4 * k * 0x1p-23 * prodMag }},
		}
	}
}

// TestParallelKernelsOversubscribed runs real kernels with GOMAXPROCS at
// 16 and 64 (on a host with fewer cores: the waits must still end
// promptly, as the idle spin yields to the scheduler now and then), one
// caller after another, from several goroutines at once, and nested in
// the chunks of another parallel call, against serial float64
// references.
func TestParallelKernelsOversubscribed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	h := newHarness(t)
	checks := parallelKernels(h, rand.New(rand.NewPCG(17, 8)))
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	for _, procs := range []int{16, 64} {
		runtime.GOMAXPROCS(procs)
		t.Run(fmt.Sprintf("procs=%d/sequential", procs), func(t *testing.T) {
			cs := checks()
			for range rounds {
				for _, c := range cs {
					c.verify(t, h.dev)
				}
			}
		})
		t.Run(fmt.Sprintf("procs=%d/concurrent", procs), func(t *testing.T) {
			var wg sync.WaitGroup
			for range 4 {
				cs := checks()
				wg.Go(func() {
					for range rounds {
						for _, c := range cs {
							c.verify(t, h.dev)
						}
					}
				})
			}
			wg.Wait()
		})
		t.Run(fmt.Sprintf("procs=%d/nested", procs), func(t *testing.T) {
			sets := make([][]kernelCheck, 3)
			for i := range sets {
				sets[i] = checks()
			}
			for range rounds {
				parallelChunks(len(sets), len(sets), func(i, _, _ int) {
					for _, c := range sets[i] {
						c.verify(t, h.dev)
					}
				})
			}
		})
	}
}

// TestChunksClaimedOnce checks the chunk hand-out itself at GOMAXPROCS
// 16 and 64: every chunk index runs exactly once over the range it was
// cut, whether the helpers are spinning, parked or busy with other
// callers, and a call whose helpers are all taken finishes on its caller.
func TestChunksClaimedOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{16, 64} {
		runtime.GOMAXPROCS(procs)
		check := func(n, workers int) {
			runs := make([]atomic.Int32, workers)
			items := make([]atomic.Int32, n)
			parallelChunks(n, workers, func(k, lo, hi int) {
				runs[k].Add(1)
				for i := lo; i < hi; i++ {
					items[i].Add(1)
				}
			})
			for k := range runs {
				if runs[k].Load() != 1 {
					t.Errorf("procs=%d n=%d workers=%d: chunk %d ran %d times", procs, n, workers, k, runs[k].Load())
				}
			}
			for i := range items {
				if items[i].Load() != 1 {
					t.Errorf("procs=%d n=%d workers=%d: item %d covered %d times", procs, n, workers, i, items[i].Load())
					return
				}
			}
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					check(procs*3+g+i%7, procs)
					if g == 0 && i%100 == 99 {
						time.Sleep(2 * helperSpin) // let the helpers park
					}
				}
			})
		}
		wg.Wait()
		// All helpers busy in a blocked call: a new call runs every chunk
		// on its caller rather than waiting for them.
		release := make(chan struct{})
		started := make(chan struct{}, procs)
		go parallelChunks(procs, procs, func(int, int, int) {
			started <- struct{}{}
			<-release
		})
		// Wait until every helper is held by the blocked call (or, when one
		// was still leaving an earlier call, for a while), not for a count
		// of started chunks: the blocked caller may hold two chunks.
		<-started
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			busy := 0
			for _, h := range *helpers.list.Load() {
				if h.state.Load() != helperIdle {
					busy++
				}
			}
			if busy == len(*helpers.list.Load()) {
				break
			}
		}
		check(1000, procs)
		close(release)
	}
}
