// Command bench times webtensor's public API on every case of the
// benchmark suite — GEMM, batched GEMM, ResNet-like convolutions,
// elementwise ops, softmax, a reduction, training steps, an optimizer
// update and the per-op cost of small ops — prints a table and writes
// JSON that go run ./bench/report merges with bench/peers/peers.py's.
//
// Usage:
//
//	go run ./bench [-device cpu|webgpu|webgpu:N|gpu|all] [-threads 1,2] [-quick] [-full]
//	               [-filter REGEXP] [-json out.json] [-min-time 1s] [-list] [-unfused=false]
//	               [-profile] [-ring 1024] [-ring-mib 1024]
//
// Each case runs once untimed (kernel compilation, pools), then in
// samples of back-to-back iterations that end with one Device.Sync, for
// at least -min-time and -min-samples samples; the table gives the
// median and the best sample per iteration. -threads sets GOMAXPROCS for
// each run on the CPU backend; a WebGPU device runs once, with the
// largest count, since the GPU does the work.
//
// On a WebGPU device each iteration's result is kept in a ring until
// -ring later results exist or those hold -ring-mib MiB (by default up to
// 1,024 results or 1 GiB, released in batches: see defaultRing), and is
// released only after Device.Flush has submitted its work: the lazy
// engine, which skips the stores of results released unread, computes
// every one, and no sample waits for the device before its end.
// WEBTENSOR_BENCH_RING and WEBTENSOR_BENCH_RING_MIB set the two flags'
// defaults (-ring 0 releases each result right after submitting it).
//
// Before timing, each case's first result on a non-CPU device is checked
// against the CPU's (checkResult). On a WebGPU device the elementwise and
// reduction cases are measured again with fusion off, in a second run of
// this program with WEBTENSOR_FUSION=0 (fusionOffRuns), as rows named
// "CASE fusion=off" (-unfused=false leaves them out). A case that fails
// is an error row; the others still run, and the command exits with
// status 1 at the end.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type config struct {
	devices  []string
	threads  []int
	quick    bool
	full     bool
	filter   *regexp.Regexp
	jsonPath string
	timing   timing
	list     bool
	// unfused also measures the fusable cases with fusion off on WebGPU
	// devices (fusionOffRuns); fusableOnly keeps only those cases (the
	// rerun that does it).
	unfused, fusableOnly bool
	// profile runs each WebGPU case profileIters more times under the
	// profiler and prints where the device time of one iteration goes.
	profile bool
	// ring bounds the results a WebGPU case keeps alive (see holder).
	ring ring
	// cpuProfile, when set, is where the Go CPU profile of the whole run
	// goes: the way to see where a CPU case's time goes on a machine that
	// has no Go toolchain (the lent GPU host's 16 cores).
	cpuProfile string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	device := fs.String("device", "cpu", "devices to measure, comma-separated: cpu, webgpu, webgpu:N, gpu (every hardware adapter) or all")
	threads := fs.String("threads", defaultThreads(), "GOMAXPROCS values, comma-separated; each CPU run uses one")
	quick := fs.Bool("quick", false, "tiny sizes and short timing: a smoke run in seconds")
	full := fs.Bool("full", false, "also run the heavy cases (4096 GEMM, large convolutions) on software adapters")
	filter := fs.String("filter", "", "only cases whose name matches this regular expression")
	jsonPath := fs.String("json", "", "write the results to this JSON file")
	minTime := fs.Duration("min-time", 0, "measure each case at least this long (default 1s, 50ms with -quick)")
	minSamples := fs.Int("min-samples", 5, "samples per case at the least")
	list := fs.Bool("list", false, "print the case names and exit")
	unfused := fs.Bool("unfused", true, "also measure elementwise ops and reductions with fusion off (WEBTENSOR_FUSION=0) on WebGPU devices")
	fusableOnly := fs.Bool("fusable-only", false, "only the cases -unfused measures")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the whole run to this file (read it with go tool pprof)")
	prof := fs.Bool("profile", false, "after timing each case on a WebGPU device, profile more iterations of it and print each kernel's device time per iteration (on stderr)")
	ringDefault, err := ringFromEnv()
	if err != nil {
		return config{}, err
	}
	ringResults := fs.Int("ring", ringDefault.results, "on a WebGPU device, release each iteration's result once this many later results exist (or -ring-mib of them), after submitting its work; 0 releases each at once, after submitting it")
	ringMiB := fs.Int("ring-mib", int(ringDefault.bytes>>20), "… or once the later results hold this many MiB")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	c := config{quick: *quick, full: *full, jsonPath: *jsonPath, list: *list, unfused: *unfused, fusableOnly: *fusableOnly, profile: *prof, cpuProfile: *cpuProfile}
	if *ringResults < 0 || *ringMiB < 1 {
		return c, fmt.Errorf("-ring %d -ring-mib %d: want -ring ≥ 0 and -ring-mib ≥ 1", *ringResults, *ringMiB)
	}
	c.ring = ring{results: *ringResults, bytes: int64(*ringMiB) << 20}
	re, err := regexp.Compile(*filter)
	if err != nil {
		return c, fmt.Errorf("-filter: %w", err)
	}
	c.filter = re
	for _, s := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("-threads: %q is not a count ≥ 1", s)
		}
		c.threads = append(c.threads, n)
	}
	c.devices = strings.Split(*device, ",")
	c.timing = timing{minTime: *minTime, minSamples: max(1, *minSamples), maxSamples: 1000}
	if c.timing.minTime == 0 {
		c.timing.minTime = time.Second
		if c.quick {
			c.timing.minTime = 50 * time.Millisecond
		}
	}
	return c, nil
}

// defaultThreads is 1 and every core: the two counts peers.py uses too.
func defaultThreads() string {
	if n := runtime.NumCPU(); n > 1 {
		return "1," + strconv.Itoa(n)
	}
	return "1"
}

func run(args []string, stdout io.Writer) error {
	c, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	var selected []benchCase
	for _, bc := range cases(c.quick) {
		if c.filter.MatchString(bc.name) && (bc.fusable || !c.fusableOnly) {
			selected = append(selected, bc)
		}
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if c.list {
		for _, bc := range selected {
			fmt.Fprintln(stdout, bc.name)
		}
		return nil
	}
	// Each case measures the device its tensors live on: Auto placement
	// could route a CPU tensor's large op to a GPU, or a GPU's small one
	// to the CPU, and the table would name the wrong device.
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	devs, err := openDevices(c.devices)
	if err != nil {
		return err
	}
	file := &schema.File{
		Suite: schema.Suite, Schema: schema.Version, Tool: "webtensor", Started: time.Now().UTC(),
		Args: args, Machine: machine(devs),
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	tw := newTable(stdout)
	var gpus []string
	for _, dev := range devs {
		if dev.Info().Backend != "cpu" {
			gpus = append(gpus, dev.Name())
		}
		threads := c.threads
		if dev.Info().Backend != "cpu" {
			threads = []int{slices.Max(c.threads)}
		}
		for _, t := range threads {
			runtime.GOMAXPROCS(t)
			for _, bc := range selected {
				r, ok := runCase(c, dev, bc, t)
				if !ok {
					continue
				}
				tw.row(r)
				file.Results = append(file.Results, r)
			}
		}
	}
	if c.unfused && !fusionOff() && len(gpus) > 0 && slices.ContainsFunc(selected, func(bc benchCase) bool { return bc.fusable }) {
		rs, err := fusionOffRuns(c, gpus)
		for _, r := range rs {
			tw.row(r)
		}
		file.Results = append(file.Results, rs...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: the fusion-off run:", err)
			file.Results = append(file.Results, schema.Result{Case: "fusion=off", Impl: "webtensor", Error: err.Error()})
		}
	}
	ofCopy(file.Results)
	tw.ofCopy(file.Results)
	if c.jsonPath != "" {
		if err := schema.Write(c.jsonPath, file); err != nil {
			return err
		}
	}
	var failed []string
	for _, r := range file.Results {
		if r.Error != "" {
			failed = append(failed, r.Case+" on "+r.Device)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d case(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// fusionOff reports whether this process runs with fusion off.
func fusionOff() bool { return os.Getenv("WEBTENSOR_FUSION") == "0" }

// fusionOffRuns measures the fusable cases on the WebGPU devices gpus
// with fusion off. The switch is read once per process, so this runs the
// bench again (the same executable) with WEBTENSOR_FUSION=0 and reads
// its JSON; its rows are named "CASE fusion=off".
func fusionOffRuns(c config, gpus []string) ([]schema.Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-unfused")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "unfused.json")
	args := []string{"-device", strings.Join(gpus, ","), "-threads", strconv.Itoa(slices.Max(c.threads)),
		"-filter", c.filter.String(), "-fusable-only", "-unfused=false", "-json", out,
		"-min-time", c.timing.minTime.String(), "-min-samples", strconv.Itoa(c.timing.minSamples),
		"-ring", strconv.Itoa(c.ring.results), "-ring-mib", strconv.FormatInt(c.ring.bytes>>20, 10)}
	if c.quick {
		args = append(args, "-quick")
	}
	if c.full {
		args = append(args, "-full")
	}
	if c.profile {
		args = append(args, "-profile")
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "WEBTENSOR_FUSION=0")
	cmd.Stderr = os.Stderr
	runErr := cmd.Run() // its table is left out: the rows come back as JSON
	f, err := schema.Read(out)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	var rs []schema.Result
	for _, r := range f.Results {
		if r.Backend == "cpu" || r.Device == "" {
			continue
		}
		rs = append(rs, r)
	}
	if runErr != nil && !slices.ContainsFunc(rs, func(r schema.Result) bool { return r.Error != "" }) {
		return rs, runErr
	}
	return rs, nil
}

// ofCopy fills OfCopy in each GB/s result that has a copy to compare with.
func ofCopy(rs []schema.Result) {
	for i, r := range rs {
		if r.Unit != schema.GBs || r.Error != "" || r.Median <= 0 {
			continue
		}
		var ref *schema.Result
		for j, c := range rs {
			if c.Group != "copy" || c.Impl != r.Impl || c.Device != r.Device || c.Threads != r.Threads ||
				c.Variant != r.Variant || c.Error != "" || c.Median <= 0 {
				continue
			}
			if ref == nil || c.Size == r.Size || ref.Size != r.Size && c.Size > ref.Size {
				ref = &rs[j]
			}
		}
		if ref != nil {
			rs[i].OfCopy = r.Median / ref.Median
		}
	}
}

// openDevices opens the named devices; "all" is the CPU and every WebGPU
// adapter that opens, "gpu" every WebGPU adapter that is hardware (what
// bench/gpu.sh measures on a lent machine).
func openDevices(names []string) ([]*tensor.Device, error) {
	var devs []*tensor.Device
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name != "all" && name != "gpu" {
			d, err := tensor.Open(name)
			if err != nil {
				return nil, err
			}
			devs = append(devs, d)
			continue
		}
		for _, a := range tensor.Adapters() {
			if name == "gpu" && (a.Info.Backend == "cpu" || a.Info.Type == hal.AdapterCPU) {
				continue
			}
			d, err := tensor.Open(a.Name)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: skipping %s: %v\n", a.Name, err)
				continue
			}
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("-device %s: no device opened (go run ./cmd/devicequery lists them)", strings.Join(names, ","))
	}
	return devs, nil
}

// runCase measures one case; ok is false for a case that does not apply
// to dev. A case that fails (an op dev lacks, a device error) yields a
// result with Error set, and the suite goes on.
func runCase(c config, dev *tensor.Device, bc benchCase, threads int) (r schema.Result, ok bool) {
	if bc.f16 && (dev.Info().Backend == "cpu" || !tensor.Supports(dev, "MatMul", tensor.Float16)) {
		return r, false
	}
	if bc.heavy && software(dev) && !c.full {
		return r, false
	}
	info := deviceInfo(dev)
	r = schema.Result{
		Case: bc.name, Group: bc.group, Size: bc.size, Impl: "webtensor", Device: info.Name,
		Adapter: info.Adapter, Backend: info.Backend, Type: info.Type, Threads: threads, Unit: bc.unit,
	}
	if fusionOff() && bc.fusable && info.Backend != "cpu" {
		// The WebGPU engine's fusion is off in this process: the same
		// case, a row of its own.
		r.Case, r.Variant = bc.name+" fusion=off", "fusion=off"
	}
	var m measurement
	err := catchAll(func() error {
		iter, free := bc.setup(dev)
		defer free()
		h := &holder{dev: dev, keep: dev.Info().Backend != "cpu", ring: c.ring}
		defer h.flush()
		first := iter()
		if err := checkResult(bc, first); err != nil {
			if first != nil {
				first.Release()
			}
			return err
		}
		h.add(first)
		var err error
		m, err = measure(c.timing, func() { h.add(iter()) }, h.flush)
		if err == nil {
			err = h.err
		}
		if err == nil && c.profile && info.Backend != "cpu" {
			profileCase(os.Stderr, dev, r.Case, m, func() { h.add(iter()) }, h.flush)
		}
		return err
	})
	if err == nil {
		err = dev.Sync()
	}
	runtime.GC()
	if err != nil {
		r.Error = err.Error()
		return r, true
	}
	r.MedianSeconds, r.BestSeconds, r.Samples, r.Iters = m.median, m.best, m.samples, m.iters
	r.Median = schema.Value(bc.unit, bc.work, m.median)
	r.Best = schema.Value(bc.unit, bc.work, m.best)
	return r, true
}

// defaultTol is the tolerance of a case that names none (GEMM,
// convolutions, the training steps' losses, the small-op chains).
const defaultTol = 1e-3

// checkResult compares got, the first result of bc on its device,
// with the same case's first result on the CPU, whose inputs are the
// same (tensor.Generator draws the same values on every device). It is
// nil where there is nothing to compare: a case that updates state in
// place, or got on the CPU itself.
func checkResult(bc benchCase, got *tensor.Tensor) error {
	if got == nil {
		return nil
	}
	if err := got.Err(); err != nil {
		return err
	}
	if got.Device().Info().Backend == "cpu" {
		return nil
	}
	cpu, err := tensor.Open("cpu")
	if err != nil {
		return fmt.Errorf("check against the CPU: %w", err)
	}
	var want []float64
	err = catchAll(func() error {
		iter, free := bc.setup(cpu)
		defer free()
		w := iter()
		if w == nil {
			return nil
		}
		defer w.Release()
		if w.DType() != tensor.Float32 {
			w32 := w.Cast(tensor.Float32)
			defer w32.Release()
			w = w32
		}
		var err error
		want, err = w.Float64s()
		return err
	})
	if err != nil {
		// The CPU lacks the op (float16 GEMM): nothing to compare with.
		if errors.Is(err, hal.ErrUnsupported) {
			return nil
		}
		return fmt.Errorf("check against the CPU: the CPU reference failed: %w", err)
	}
	if want == nil {
		return nil
	}
	g := got
	if g.DType() != tensor.Float32 {
		g = g.Cast(tensor.Float32)
		defer g.Release()
	}
	have, err := g.Float64s()
	if err != nil {
		return err
	}
	return compare(have, want, bc.tol, bc.magnitude)
}

// compare reports an error when got and want differ by more than
// tol·max(1, max|want|) anywhere (tol 0: defaultTol; magnitude, when
// positive, replaces max(1, max|want|)), or in length.
func compare(got, want []float64, tol, magnitude float64) error {
	if tol == 0 {
		tol = defaultTol
	}
	if len(got) != len(want) {
		return fmt.Errorf("wrong result: %d values, the CPU's has %d", len(got), len(want))
	}
	scale := 1.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	if magnitude > 0 {
		scale = magnitude
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(got[i] - want[i])
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		if d > worst {
			worst, at = d, i
		}
	}
	if worst > tol*scale {
		return fmt.Errorf("wrong result: element %d is %g, the CPU's %g (error %.3g > tolerance %.3g)",
			at, got[at], want[at], worst, tol*scale)
	}
	return nil
}

// catchAll runs f, turning any panic into an error, so that one broken
// case does not end the suite.
func catchAll(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("panic: %v", p)
			}
		}
	}()
	return f()
}

// ring is how many results a holder keeps alive behind the newest: an
// iteration's result is released once ring later results exist, or once
// the later results hold ringBytes, whichever comes first (-ring,
// -ring-mib).
type ring struct {
	results int
	bytes   int64
}

// defaultRing releases results in large batches: up to 1,024 of them or
// 1 GiB, whichever comes first, one Device.Flush (a submission) per
// batch. A small ring was measured first and lost: on an NVIDIA H200
// (Dawn Vulkan, 2026-11-27) a submission costs the host 30–40 µs, so
// -ring 2 made add/1M 196 GB/s against 977 with batches and -ring 0 (one
// output buffer reused, as PyTorch's out=) took 42–54 µs per add/4M
// whose kernel ran 12–18 µs; a reused buffer's L2 hits saved only about
// 2.4 µs of that kernel. Smaller rings remain flags for such comparisons.
var defaultRing = ring{results: 1024, bytes: 1 << 30}

// Environment variables that set -ring and -ring-mib's defaults, so that
// a script that varies only the environment (a GPU run's variants) can
// compare rings.
const (
	ringEnv    = "WEBTENSOR_BENCH_RING"
	ringMiBEnv = "WEBTENSOR_BENCH_RING_MIB"
)

// ringFromEnv is defaultRing with what ringEnv and ringMiBEnv set.
func ringFromEnv() (ring, error) {
	r := defaultRing
	for _, v := range []struct {
		name  string
		set   func(n int)
		least int
	}{
		{ringEnv, func(n int) { r.results = n }, 0},
		{ringMiBEnv, func(n int) { r.bytes = int64(n) << 20 }, 1},
	} {
		s := strings.TrimSpace(os.Getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < v.least {
			return r, fmt.Errorf("%s=%q: want a whole number ≥ %d", v.name, s, v.least)
		}
		v.set(n)
	}
	return r, nil
}

// holder keeps each iteration's result alive in a small ring, so that a
// lazy GPU engine, which skips the stores of results released unread
// before they ran, computes every one, and memory stays bounded. Results
// leave the ring in batches (up to ring.results, or ring.bytes, at once)
// after a Device.Flush has submitted their work; nothing waits for the
// device inside a sample: the only Sync is flush's, which ends the
// sample. The CPU backend runs each op at once, so there results go back
// at once and buffers stay warm in cache, as a peer's out= does.
type holder struct {
	dev   *tensor.Device
	keep  bool
	ring  ring
	held  []*tensor.Tensor
	sizes []int64 // bytes of each held result
	err   error   // the first error of a Flush made to release results
}

func (h *holder) add(t *tensor.Tensor) {
	if t == nil {
		return
	}
	if !h.keep {
		t.Release()
		return
	}
	h.held = append(h.held, t)
	h.sizes = append(h.sizes, int64(t.Len()*t.DType().Size()))
	n, bytes := h.releasable()
	if n == 0 || (n < h.ring.results && bytes < h.ring.bytes) {
		return // release in batches: one submission per batch
	}
	if err := h.dev.Flush(); err != nil {
		if h.err == nil {
			h.err = err
		}
		return // keep them: released unsubmitted, their stores could be skipped
	}
	for _, r := range h.held[:n] {
		r.Release()
	}
	h.held = slices.Delete(h.held, 0, n)
	h.sizes = slices.Delete(h.sizes, 0, n)
}

// releasable returns how many of the oldest held results may go (each has
// ring.results later results, or ring.bytes of them) and their bytes.
func (h *holder) releasable() (n int, bytes int64) {
	var later int64
	for i := len(h.held) - 1; i >= 0; i-- {
		if len(h.held)-1-i >= h.ring.results || later >= h.ring.bytes {
			for _, s := range h.sizes[:i+1] {
				bytes += s
			}
			return i + 1, bytes
		}
		later += h.sizes[i]
	}
	return 0, 0
}

// flush ends a sample: it waits for the device, then releases every held
// result.
func (h *holder) flush() error {
	err := h.dev.Sync()
	for _, t := range h.held {
		t.Release()
	}
	h.held, h.sizes = h.held[:0], h.sizes[:0]
	return err
}
