package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/bench/schema"
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
}

// TestPeersMatch checks that peers.py defines the same cases under the
// same names: the report pairs results by name, so a drift would leave
// empty ratio cells. copy/* is peers-only (the device-copy reference)
// and matmul-f16 GPU-only.
func TestPeersMatch(t *testing.T) {
	python, err := exec.LookPath("/usr/bin/python3")
	if err != nil || exec.Command(python, "-c", "import torch, numpy").Run() != nil {
		t.Skip("needs /usr/bin/python3 with torch and numpy (make bench installs them)")
	}
	for _, quick := range []bool{true, false} {
		args := []string{"peers/peers.py", "--list"}
		if quick {
			args = append(args, "--quick")
		}
		out, err := exec.Command(python, args...).Output()
		require.NoError(t, err)
		var peers []string
		for _, name := range strings.Fields(string(out)) {
			if !strings.HasPrefix(name, "copy/") {
				peers = append(peers, name)
			}
		}
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
