package main

import (
	"bytes"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/tensor"
)

// TestQuickRun runs the whole quick suite on the CPU with the shortest
// timing and checks that every case produced a positive result in the
// JSON, so that make bench cannot break unnoticed. It takes a few seconds.
func TestQuickRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "quick.json")
	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-quick", "-device", "cpu", "-threads", "1", "-min-time", "1ms",
		"-min-samples", "1", "-json", out}, &stdout))

	f, err := schema.Read(out)
	require.NoError(t, err)
	assert.Equal(t, "webtensor", f.Tool)
	assert.NotEmpty(t, f.Machine.CPU)
	assert.Positive(t, f.Machine.Cores)
	require.Len(t, f.Machine.Devices, 1)
	assert.Equal(t, "cpu", f.Machine.Devices[0].Backend)

	var want []string
	for _, c := range cases(true) {
		if !c.f16 {
			want = append(want, c.name)
		}
	}
	var got []string
	for _, r := range f.Results {
		got = append(got, r.Case)
		assert.Empty(t, r.Error, r.Case)
		assert.Positive(t, r.Median, r.Case)
		assert.Positive(t, r.Best, r.Case)
		assert.Positive(t, r.MedianSeconds, r.Case)
		assert.LessOrEqual(t, r.BestSeconds, r.MedianSeconds, r.Case)
		assert.Equal(t, 1, r.Threads, r.Case)
		assert.Equal(t, "webtensor", r.Impl)
		assert.Contains(t, stdout.String(), r.Case)
	}
	assert.Equal(t, want, got)
}

func TestFilterAndList(t *testing.T) {
	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-list", "-filter", "^matmul/"}, &stdout))
	assert.Equal(t, "matmul/256\nmatmul/512\nmatmul/1024\nmatmul/2048\nmatmul/4096\n", stdout.String())
	assert.Error(t, run([]string{"-threads", "0"}, &stdout))
	assert.Error(t, run([]string{"-filter", "("}, &stdout))
	assert.Error(t, run([]string{"-ring", "-1"}, &stdout))
	assert.Error(t, run([]string{"-ring-mib", "0"}, &stdout))

	t.Setenv(ringEnv, "0")
	t.Setenv(ringMiBEnv, "16")
	c, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ring{results: 0, bytes: 16 << 20}, c.ring, "the environment sets the defaults")
	c, err = parseFlags([]string{"-ring", "3"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ring{results: 3, bytes: 16 << 20}, c.ring, "a flag overrides the environment")
	t.Setenv(ringEnv, "two")
	_, err = parseFlags(nil, io.Discard)
	assert.ErrorContains(t, err, ringEnv)
}

// TestHolderRing checks which results the ring keeps: each stays until
// ring.results later results exist, or ring.bytes of them, and they go in
// batches (of ring.results, or ring.bytes), never more than twice the
// bound at once. It runs on the CPU with keep forced on; Flush is a no-op
// there, and TestEveryIterationRuns checks on a GPU that the released
// results' work runs.
func TestHolderRing(t *testing.T) {
	dev, err := tensor.Open("cpu")
	require.NoError(t, err)
	x := tensor.Zeros(dev, 256) // 1 KiB of float32
	defer x.Release()
	for _, tc := range []struct {
		ring     ring
		heldEach []int // held after each add
	}{
		// By count: kept until 2 later exist, released two at a time.
		{ring{results: 2, bytes: 1 << 30}, []int{1, 2, 3, 2, 3, 2, 3}},
		{ring{results: 1, bytes: 1 << 30}, []int{1, 1, 1, 1}},
		{ring{results: 0, bytes: 1 << 30}, []int{0, 0, 0}},
		// By bytes: 2 KiB of later results release one; batches of 2 KiB.
		{ring{results: 100, bytes: 2 << 10}, []int{1, 2, 3, 2, 3, 2}},
	} {
		h := &holder{dev: dev, keep: true, ring: tc.ring}
		var got []int
		var all []*tensor.Tensor
		for range tc.heldEach {
			r := x.Add(x)
			all = append(all, r)
			h.add(r)
			got = append(got, len(h.held))
			for _, kept := range h.held {
				require.NoError(t, kept.Err(), "a held result is alive")
			}
		}
		assert.Equal(t, tc.heldEach, got, "%+v", tc.ring)
		// The newest are the ones held.
		assert.Equal(t, all[len(all)-len(h.held):], h.held)
		require.NoError(t, h.flush())
		assert.Empty(t, h.held)
	}
}

// TestPeersMatch checks that peers.py defines the same cases under the
// same names: the report pairs results by name, so a drift would leave
// empty ratio cells. matmul-f16 is GPU-only.
func TestPeersMatch(t *testing.T) {
	// --list imports neither torch nor numpy.
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	for _, quick := range []bool{true, false} {
		args := []string{"peers/peers.py", "--list"}
		if quick {
			args = append(args, "--quick")
		}
		out, err := exec.Command(python, args...).Output()
		require.NoError(t, err)
		peers := strings.Fields(string(out))
		var ours []string
		for _, c := range cases(quick) {
			if !c.f16 {
				ours = append(ours, c.name)
			}
		}
		assert.Equal(t, ours, peers, "quick=%v", quick)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{1 << 24: "16M", 1 << 20: "1M", 10_000_000: "10M", 1 << 16: "64K", 1000: "1000"} {
		assert.Equal(t, want, count(n))
	}
}

func TestMeasure(t *testing.T) {
	calls, syncs := 0, 0
	m, err := measure(timing{minTime: 0, minSamples: 3, maxSamples: 10}, func() { calls++ }, func() error { syncs++; return nil })
	require.NoError(t, err)
	assert.GreaterOrEqual(t, m.samples, 3)
	assert.GreaterOrEqual(t, m.iters, 1)
	assert.LessOrEqual(t, m.best, m.median)
	// One warm-up, at least one calibration batch, and the samples.
	assert.GreaterOrEqual(t, calls, 2+m.samples*m.iters)
	assert.GreaterOrEqual(t, syncs, m.samples+2)
}

// TestEveryIterationRuns checks on webgpu:0, with fusion on, that N
// iterations of each elementwise and reduction case record N times the
// dispatches of one: no iteration's kernel is merged with another's
// (which would read their shared inputs once for all) or dropped. The
// control shows that the check sees it: back-to-back a.Add(b) on the
// same views fuse into fewer kernels than iterations. N iterations through
// bench's ring, which releases results along the way after a Flush, must
// record as many dispatches too (released unflushed, they would not).
func TestEveryIterationRuns(t *testing.T) {
	dev, err := tensor.Open("webgpu:0")
	if err != nil {
		t.Skipf("no webgpu:0: %v", err)
	}
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	const n = 8
	dispatches := func(f func()) int64 {
		require.NoError(t, dev.Sync())
		before := dev.Stats().Dispatches
		f()
		require.NoError(t, dev.Sync())
		return dev.Stats().Dispatches - before
	}
	for _, bc := range cases(true) {
		if !bc.fusable {
			continue
		}
		iter, free := bc.setup(dev)
		var held []*tensor.Tensor
		run := func(k int) func() {
			return func() {
				for range k {
					held = append(held, iter())
				}
			}
		}
		dispatches(run(1)) // warm-up: kernels, pools
		one := dispatches(run(1))
		many := dispatches(run(n))
		for _, r := range held {
			require.NoError(t, r.Err(), bc.name)
			r.Release()
		}
		// Through bench's ring, keeping none (-ring 0): each result is
		// released, after a Flush, as soon as it is issued, while its
		// fusion group would still be open without the Flush (with a
		// larger ring the next iteration, of another shape, closes it
		// first).
		released := 0
		ringed := dispatches(func() {
			h := &holder{dev: dev, keep: true, ring: ring{results: 0, bytes: 1 << 40}}
			for range n {
				h.add(iter())
			}
			released = n - len(h.held)
			require.NoError(t, h.flush(), bc.name)
		})
		// The control: released unflushed, an elementwise result's store
		// is skipped, so the count above sees a skipped store.
		unflushed := dispatches(func() {
			for range n {
				iter().Release()
			}
		})
		free()
		t.Logf("%s: %d dispatches for 1 iteration, %d for %d, %d through the ring (%d released on the way), %d released unflushed",
			bc.name, one, many, n, ringed, released, unflushed)
		assert.Positive(t, one, bc.name)
		assert.Equal(t, n*one, many, "%s: %d iterations recorded %d dispatches, one %d", bc.name, n, many, one)
		assert.Equal(t, n, released, "%s: the ring of none releases every result at once", bc.name)
		assert.Equal(t, n*one, ringed, "%s: %d iterations through the ring recorded %d dispatches, one %d", bc.name, n, ringed, one)
		if !fusionOff() && bc.group != "sum" && bc.group != "softmax" {
			assert.Less(t, unflushed, n*one, "%s: the control: results released unflushed are no longer skipped", bc.name)
		}
	}

	if fusionOff() {
		return
	}
	g := tensor.NewGenerator(1)
	a, b := g.Randn(dev, 1<<12), g.Randn(dev, 1<<12)
	defer a.Release()
	defer b.Release()
	var held []*tensor.Tensor
	naive := dispatches(func() {
		for range n {
			held = append(held, a.Add(b))
		}
	})
	for _, r := range held {
		r.Release()
	}
	t.Logf("control: %d back-to-back a.Add(b) on the same views: %d dispatches", n, naive)
	assert.Less(t, naive, int64(n), "the control: back-to-back adds on the same inputs no longer fuse")
}

func TestCompare(t *testing.T) {
	assert.NoError(t, compare([]float64{1, 2, 100}, []float64{1, 2, 100.05}, 1e-3, 0))
	assert.ErrorContains(t, compare([]float64{1, 2, 100}, []float64{1, 2.5, 100}, 1e-3, 0), "element 1")
	assert.Error(t, compare([]float64{1}, []float64{1, 2}, 1e-3, 0))
	assert.Error(t, compare([]float64{math.NaN()}, []float64{1}, 1e-3, 0))
	// A cancelling sum: 200.40 against 200.37 is 1.6e-4 of the result but
	// 4e-8 of Σ|x| = 8e5, within a float32 sum's rounding.
	assert.Error(t, compare([]float64{200.402}, []float64{200.370}, 1e-4, 0))
	assert.NoError(t, compare([]float64{200.402}, []float64{200.370}, 2e-7, 8e5))
	assert.Error(t, compare([]float64{208.4}, []float64{200.370}, 2e-7, 8e5))
}

func TestOfCopy(t *testing.T) {
	rs := []schema.Result{
		{Case: "add/16M", Group: "add", Impl: "webtensor", Device: "cpu", Threads: 1, Unit: schema.GBs, Size: 16, Median: 10},
		{Case: "sum/4M", Group: "sum", Impl: "webtensor", Device: "cpu", Threads: 1, Unit: schema.GBs, Size: 4, Median: 5},
		{Case: "copy/16M", Group: "copy", Impl: "webtensor", Device: "cpu", Threads: 1, Unit: schema.GBs, Size: 16, Median: 20},
		{Case: "copy/1M", Group: "copy", Impl: "webtensor", Device: "cpu", Threads: 1, Unit: schema.GBs, Size: 1, Median: 40},
		{Case: "add/16M", Group: "add", Impl: "webtensor", Device: "cpu", Threads: 2, Unit: schema.GBs, Size: 16, Median: 10},
		{Case: "matmul/64", Group: "matmul", Impl: "webtensor", Device: "cpu", Threads: 1, Unit: schema.GFLOPS, Median: 10},
	}
	ofCopy(rs)
	assert.InDelta(t, 0.5, rs[0].OfCopy, 1e-12)
	assert.InDelta(t, 0.25, rs[1].OfCopy, 1e-12, "no copy/4M: the largest copy")
	assert.InDelta(t, 1, rs[2].OfCopy, 1e-12)
	assert.Zero(t, rs[4].OfCopy, "no copy at 2 threads")
	assert.Zero(t, rs[5].OfCopy)
}

// TestFailingCase checks that a case that panics or computes a wrong
// result yields an error row, and the others still run.
func TestFailingCase(t *testing.T) {
	c, err := parseFlags([]string{"-min-time", "1ms", "-min-samples", "1"}, io.Discard)
	require.NoError(t, err)
	dev, err := tensor.Open("cpu")
	require.NoError(t, err)
	bad := benchCase{name: "bad/panic", unit: schema.Ms, setup: func(*tensor.Device) (func() *tensor.Tensor, func()) {
		panic("broken setup")
	}}
	r, ok := runCase(c, dev, bad, 1)
	require.True(t, ok)
	assert.Contains(t, r.Error, "broken setup")
	good := addCase(1 << 10)
	r, ok = runCase(c, dev, good, 1)
	require.True(t, ok)
	assert.Empty(t, r.Error)
	assert.Positive(t, r.Median)

	gpu, err := tensor.Open("webgpu:0")
	if err != nil {
		return
	}
	defer tensor.SetPlacement(tensor.SetPlacement(tensor.Explicit))
	wrong := addCase(1 << 10)
	setup := wrong.setup
	wrong.setup = func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
		iter, free := setup(dev)
		if dev.Info().Backend == "cpu" {
			return iter, free
		}
		return func() *tensor.Tensor {
			r := iter()
			defer r.Release()
			return r.AddScalar(1e-3)
		}, free
	}
	r, ok = runCase(c, gpu, wrong, 1)
	require.True(t, ok)
	assert.Contains(t, r.Error, "wrong result")
	r, ok = runCase(c, gpu, good, 1)
	require.True(t, ok)
	assert.Empty(t, r.Error)
}
