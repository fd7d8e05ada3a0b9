// Package soak is webtensor's leak test: it loops allocate/free cycles,
// MLP and CNN training steps, mixed (fused on WebGPU) ops and checkpoint
// round trips on each device for a duration, samples the devices' pool
// counters, the Go heap, the process RSS and the goroutine count, and after
// a warm-up fits a least-squares line to each metric: a slope above its
// Tolerance is a leak. cmd/soak runs it for minutes to hours (make soak);
// its test runs it for seconds.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

// Config says what a run does.
type Config struct {
	Devices  []*tensor.Device
	Duration time.Duration
	// Warmup is how long from the start the fit ignores: pools fill, the
	// heap reaches its working size and lazily built pipelines and
	// caches are created. 0 means a fifth of Duration.
	Warmup time.Duration
	// SampleEvery is the sampling interval; 0 means Duration/120, at
	// least 100 ms.
	SampleEvery time.Duration
	// AllocCycles is the number of allocate/free cycles per device per
	// round (0: 2000).
	AllocCycles int
	// CheckpointEvery is how many rounds pass between checkpoint round
	// trips (0: 20).
	CheckpointEvery int
	// Dir receives the checkpoints; "" makes a temporary directory that
	// is removed at the end.
	Dir string
	// LeakEvery > 0 injects a leak, holding every LeakEvery-th allocated
	// tensor for the rest of the run. Only for tests of the checks.
	LeakEvery int
	// Tolerances overrides DefaultTolerances per metric kind.
	Tolerances map[string]Tolerance
	// Progress, when not nil, gets a line per sample.
	Progress io.Writer
}

// DefaultTolerances per metric kind. Every figure is far below what a real
// leak does at the soak's rate (thousands of tensors a second: holding
// one 4-byte tensor in a thousand is already hundreds of KiB a minute on
// the Go heap alone, and its buffers far more) and above the noise seen
// on quiet runs.
var DefaultTolerances = map[string]Tolerance{
	// At a sample every tensor of the round is released and cleaned up,
	// so live bytes are exactly the models and optimizer state: any
	// drift is a leak. Step allows one late lazily-made buffer.
	"live": {PerMinute: 1 << 10, Step: 64 << 10},
	// The pool keeps freed buffers by size class; once every class the
	// random sizes hit has as many buffers as the hold window needs, it
	// stops growing. A class first hit late is a step, not a trend.
	"pooled": {PerMinute: 16 << 10, Step: 8 << 20},
	// The Go heap after a GC: the run's bookkeeping is fixed-size, so
	// the heap is flat up to allocator fragmentation (a fraction of a
	// percent) and sync.Pool / map growth steps.
	"heap_alloc": {PerMinute: 64 << 10, Rel: 1e-3, Step: 2 << 20},
	"heap_inuse": {PerMinute: 64 << 10, Rel: 1e-3, Step: 4 << 20},
	// RSS adds the C side (the WebGPU library, the driver, glibc arenas
	// that grow per thread and rarely shrink), which moves in MiB steps
	// without leaking: a wider step, a level-relative 0.2%/min.
	"rss": {PerMinute: 256 << 10, Rel: 2e-3, Step: 24 << 20},
	// Kernels compiled: the work repeats its ops, whose kernels take sizes,
	// offsets and constants as parameters, so after the warm-up only a
	// GEMM variant first hit late may add one (each costs the driver
	// memory, which RSS would show as growth).
	"kernels": {Step: 4},
	// Goroutines: the runtime and the WebGPU callbacks start a few on
	// demand; a leak per round would add hundreds a minute.
	"goroutines": {PerMinute: 0.5, Step: 4},
}

// Report is the result of a run.
type Report struct {
	Devices  []string      `json:"devices"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// FirstRound is how long the first round took, before the clock
	// started: it compiles every kernel the work uses.
	FirstRound  time.Duration `json:"first_round_ns"`
	Rounds      int64         `json:"rounds"`
	Ops         int64         `json:"ops"`
	Cycles      int64         `json:"alloc_free_cycles"`
	TrainSteps  int64         `json:"train_steps"`
	Checkpoints int64         `json:"checkpoints"`
	Samples     []Sample      `json:"samples"`
	Verdicts    []Verdict     `json:"verdicts"`
	// Peak and final live bytes summed over the devices, and peak and
	// final RSS, over the samples.
	PeakLiveBytes  int64                 `json:"peak_live_bytes"`
	FinalLiveBytes int64                 `json:"final_live_bytes"`
	PeakRSS        int64                 `json:"peak_rss"`
	FinalRSS       int64                 `json:"final_rss"`
	FinalHeapAlloc uint64                `json:"final_heap_alloc"`
	LastLoss       map[string][2]float64 `json:"last_loss"` // per device: MLP, CNN
	Flat           bool                  `json:"flat"`
}

// ErrGrowing is returned by Run when a metric grew faster than allowed.
var ErrGrowing = errors.New("soak: memory is not flat")

// Run runs the soak until cfg.Duration passes (longer, up to 4×Duration,
// while it has fewer than MinFitSamples samples after the warm-up) or ctx
// ends. An error from the work ends it early with that error; a metric
// that is not flat makes it return the report with ErrGrowing.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("soak: no devices")
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = cfg.Duration / 5
	}
	if cfg.SampleEvery == 0 {
		cfg.SampleEvery = max(cfg.Duration/120, 100*time.Millisecond)
	}
	if cfg.AllocCycles == 0 {
		cfg.AllocCycles = 2000
	}
	if cfg.CheckpointEvery == 0 {
		cfg.CheckpointEvery = 20
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "webtensor-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	workers := make([]*worker, len(cfg.Devices))
	rep := &Report{Warmup: cfg.Warmup, LastLoss: map[string][2]float64{}}
	for i, d := range cfg.Devices {
		workers[i] = newWorker(d, cfg.Dir, uint64(i+1), cfg.LeakEvery)
		rep.Devices = append(rep.Devices, d.Name())
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()

	// The first round compiles every kernel the work uses: seconds on a
	// cold driver shader cache, and nothing to do with leaks. The clock
	// (Duration, Warmup, the samples' times) starts after it.
	first := time.Now()
	for _, w := range workers {
		if err := w.round(cfg.AllocCycles, false); err != nil {
			return rep, err
		}
	}
	rep.Rounds++
	rep.FirstRound = time.Since(first)

	start := time.Now()
	totals := func() (ops, cycles int64) {
		for _, w := range workers {
			ops += w.ops
			cycles += w.cycles
		}
		return
	}
	sample := func() error {
		ops, cycles := totals()
		s, err := take(time.Since(start), cfg.Devices, ops, cycles)
		if err != nil {
			return err
		}
		rep.Samples = append(rep.Samples, s)
		if cfg.Progress != nil {
			fmt.Fprintln(cfg.Progress, s.line())
		}
		return nil
	}
	if err := sample(); err != nil {
		return nil, err
	}
	lastSample := time.Now()
	// A verdict needs MinFitSamples samples after the warm-up; on a loaded
	// machine whose rounds outlast the sampling interval (a round that
	// still compiles kernel variants on a software adapter takes seconds)
	// the run goes on past Duration until it has them, up to 4×Duration.
	fitted := func() int {
		n := 0
		for _, s := range rep.Samples {
			if s.At >= cfg.Warmup {
				n++
			}
		}
		return n
	}
	more := func() bool {
		since := time.Since(start)
		// The closing sample below adds one more after the warm-up.
		return since < cfg.Duration || since < 4*cfg.Duration && fitted()+1 < MinFitSamples
	}
	for more() && ctx.Err() == nil {
		for _, w := range workers {
			if err := w.round(cfg.AllocCycles, rep.Rounds%int64(cfg.CheckpointEvery) == int64(cfg.CheckpointEvery-1)); err != nil {
				return rep, err
			}
		}
		rep.Rounds++
		if time.Since(lastSample) >= cfg.SampleEvery {
			if err := sample(); err != nil {
				return rep, err
			}
			lastSample = time.Now()
		}
	}
	if err := sample(); err != nil {
		return rep, err
	}
	rep.Duration = time.Since(start)
	rep.Ops, rep.Cycles = totals()
	for _, w := range workers {
		rep.TrainSteps += w.steps
		rep.Checkpoints += w.checkpoints
		rep.LastLoss[w.dev.Name()] = [2]float64{w.lastMLPLoss, w.lastCNNLoss}
	}
	rep.summarize()
	rep.Verdicts = verdicts(rep.Samples, cfg.Warmup, cfg.Tolerances)
	rep.Flat = true
	for _, v := range rep.Verdicts {
		rep.Flat = rep.Flat && v.Flat
	}
	if !rep.Flat {
		return rep, ErrGrowing
	}
	return rep, nil
}

func (r *Report) summarize() {
	for i, s := range r.Samples {
		var live int64
		for _, d := range s.Devices {
			live += d.LiveBytes
		}
		r.PeakLiveBytes = max(r.PeakLiveBytes, live)
		r.PeakRSS = max(r.PeakRSS, s.RSS)
		if i == len(r.Samples)-1 {
			r.FinalLiveBytes, r.FinalRSS, r.FinalHeapAlloc = live, s.RSS, s.HeapAlloc
		}
	}
}

// verdicts fits every metric over the samples taken after warmup.
func verdicts(samples []Sample, warmup time.Duration, over map[string]Tolerance) []Verdict {
	tol := func(kind string) Tolerance {
		if t, ok := over[kind]; ok {
			return t
		}
		return DefaultTolerances[kind]
	}
	var after []Sample
	for _, s := range samples {
		if s.At >= warmup {
			after = append(after, s)
		}
	}
	series := func(f func(Sample) float64) []Point {
		pts := make([]Point, len(after))
		for i, s := range after {
			pts[i] = Point{At: s.At, Value: f(s)}
		}
		return pts
	}
	var out []Verdict
	if len(samples) > 0 {
		for i, d := range samples[0].Devices {
			out = append(out,
				Check("live:"+d.Device, series(func(s Sample) float64 { return float64(s.Devices[i].LiveBytes) }), tol("live")),
				Check("pooled:"+d.Device, series(func(s Sample) float64 { return float64(s.Devices[i].PooledBytes) }), tol("pooled")),
				Check("kernels:"+d.Device, series(func(s Sample) float64 { return float64(s.Devices[i].Kernels) }), tol("kernels")))
		}
	}
	out = append(out,
		Check("heap_alloc", series(func(s Sample) float64 { return float64(s.HeapAlloc) }), tol("heap_alloc")),
		Check("heap_inuse", series(func(s Sample) float64 { return float64(s.HeapInuse) }), tol("heap_inuse")),
		Check("goroutines", series(func(s Sample) float64 { return float64(s.Goroutines) }), tol("goroutines")))
	if len(samples) > 0 && samples[0].RSS > 0 {
		out = append(out, Check("rss", series(func(s Sample) float64 { return float64(s.RSS) }), tol("rss")))
	}
	return out
}
