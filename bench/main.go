// Command bench times webtensor's public API on every case of the
// benchmark suite — GEMM, batched GEMM, ResNet-like convolutions,
// elementwise ops, softmax, a reduction, training steps, an optimizer
// update and the per-op cost of small ops — prints a table and writes
// JSON that go run ./bench/report merges with bench/peers/peers.py's.
//
// Usage:
//
//	go run ./bench [-device cpu|webgpu|webgpu:N|gpu|all] [-threads 1,2] [-quick] [-full]
//	               [-filter REGEXP] [-json out.json] [-min-time 1s] [-list]
//
// Each case runs once untimed (kernel compilation, pools), then in
// samples of back-to-back iterations that end with one Device.Sync, for
// at least -min-time and -min-samples samples; the table gives the
// median and the best sample per iteration. -threads sets GOMAXPROCS for
// each run on the CPU backend; a WebGPU device runs once, with the
// largest count, since the GPU does the work.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
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
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	c := config{quick: *quick, full: *full, jsonPath: *jsonPath, list: *list}
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
		if c.filter.MatchString(bc.name) {
			selected = append(selected, bc)
		}
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
	for _, dev := range devs {
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
	if c.jsonPath != "" {
		return schema.Write(c.jsonPath, file)
	}
	return nil
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
	var m measurement
	err := catchAll(func() error {
		iter, free := bc.setup(dev)
		defer free()
		h := &holder{dev: dev, keep: dev.Info().Backend != "cpu"}
		defer h.flush()
		var err error
		m, err = measure(c.timing, func() { h.add(iter()) }, h.flush)
		if err == nil {
			err = h.err
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

// holdBytes bounds the results a holder keeps before it waits for the
// device: a few large results, or many small ones, per Sync.
const holdBytes = 1 << 30

// holder keeps each iteration's result alive until the device has run
// it (flush: Sync, then Release). A lazy GPU engine may skip work whose
// result is released unread; the CPU backend runs each op at once, so
// there results go back at once and buffers stay warm in cache, as a
// peer's out= does.
type holder struct {
	dev   *tensor.Device
	keep  bool
	held  []*tensor.Tensor
	bytes int64
	err   error // the first error of a flush made to bound memory
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
	h.bytes += int64(t.Len() * t.DType().Size())
	if h.bytes >= holdBytes {
		if err := h.flush(); err != nil && h.err == nil {
			h.err = err
		}
	}
}

func (h *holder) flush() error {
	err := h.dev.Sync()
	for _, t := range h.held {
		t.Release()
	}
	h.held, h.bytes = h.held[:0], 0
	return err
}
