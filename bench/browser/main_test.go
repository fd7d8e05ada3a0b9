package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/bench/schema"
)

func result(name, unit string, median, medianS, bestS float64, samples int) schema.Result {
	return schema.Result{Case: name, Unit: unit, Median: median, MedianSeconds: medianS, BestSeconds: bestS, Samples: samples}
}

// TestCombine: a row is the median of its rounds' medians and the best of
// their bests, in its unit (GFLOPS from the work its seconds imply, ms
// directly), and keeps a round's error.
func TestCombine(t *testing.T) {
	const work = 2e9 // FLOPs: 1 s is 2 GFLOPS
	res := pageResult{rounds: []round{
		{Impl: "tfjs-webgpu", Round: 1, Versions: "tfjs 4.22.0", Results: []schema.Result{
			result("matmul/256", schema.GFLOPS, work/1.0/1e9, 1.0, 0.5, 5),
			result("mlp-step", schema.Ms, 30, 0.030, 0.020, 5)}},
		{Impl: "webtensor", Round: 1, Results: []schema.Result{result("matmul/256", schema.GFLOPS, work/4.0/1e9, 4.0, 3.0, 6)}},
		{Impl: "webtensor", Round: 2, Results: []schema.Result{result("matmul/256", schema.GFLOPS, work/2.0/1e9, 2.0, 1.0, 6)}},
		{Impl: "tfjs-webgpu", Round: 2, Results: []schema.Result{
			result("matmul/256", schema.GFLOPS, work/3.0/1e9, 3.0, 2.5, 5),
			{Case: "mlp-step", Unit: schema.Ms, Error: "loss off"}}},
	}}
	f := combine(res, config{filter: "x", rounds: 2, minTime: time.Second})
	require.Equal(t, "bench-browser", f.Tool)
	require.Len(t, f.Results, 3)
	got := map[string]schema.Result{}
	for _, r := range f.Results {
		got[r.Impl+" "+r.Case] = r
		require.Equal(t, "browser:webgpu", r.Device)
	}
	tf := got["tfjs-webgpu matmul/256"]
	require.InDelta(t, 2.0, tf.MedianSeconds, 1e-12) // median of 1 and 3
	require.InDelta(t, 0.5, tf.BestSeconds, 1e-12)
	require.InDelta(t, 1.0, tf.Median, 1e-9) // 2 GFLOP in 2 s
	require.InDelta(t, 4.0, tf.Best, 1e-9)
	require.Equal(t, 10, tf.Samples)
	require.Equal(t, "tfjs 4.22.0, 2 rounds", tf.Variant)
	wt := got["webtensor matmul/256"]
	require.InDelta(t, 3.0, wt.MedianSeconds, 1e-12)
	require.InDelta(t, 2.0/3, wt.Median, 1e-9)
	mlp := got["tfjs-webgpu mlp-step"]
	require.Equal(t, "loss off", mlp.Error)
	require.InDelta(t, 30, mlp.Median, 1e-9, "ms: the one good round's")

	var out bytes.Buffer
	printTable(&out, f, true)
	require.Contains(t, out.String(), "| matmul/256 | 0.667 GFLOPS | 1.000 GFLOPS | 0.67× |")
	require.Contains(t, out.String(), "| mlp-step | – | error | – |")
}

func TestMedian(t *testing.T) {
	require.Equal(t, 0.0, median(nil))
	require.Equal(t, 2.0, median([]float64{3, 1, 2}))
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"stray"}, {"-rounds", "0"}, {"-filter", "("}, {"-nope"}} {
		require.Error(t, run(args, io.Discard, io.Discard), "%q", args)
	}
}

// TestDefaultCasesOnBothSides: the default filter selects issue 21's four
// rows in the benchmark program and in the tfjs cases alike, so neither
// side's rows silently go missing from the table.
func TestDefaultCasesOnBothSides(t *testing.T) {
	want := []string{"matmul/256", "matmul/1024", "add/1M", "mlp-step/784-512-512-10-b128"}
	out, err := exec.Command("go", "run", "..", "-list").Output()
	require.NoError(t, err)
	re := regexp.MustCompile(defaultCases)
	var ours []string
	for _, name := range strings.Fields(string(out)) {
		if re.MatchString(name) {
			ours = append(ours, name)
		}
	}
	require.ElementsMatch(t, want, ours, "go run ./bench -list")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node for the tfjs side")
	}
	out, err = exec.Command(node, filepath.Join("..", "peers", "tfjs", "tfjs_peer.mjs"), "--list", "--filter", defaultCases).Output()
	require.NoError(t, err)
	require.ElementsMatch(t, want, strings.Fields(string(out)), "tfjs_peer.mjs --list")
}

// TestPage runs the page for real, briefly: one round of the 1M add on
// both sides. It needs Chromium and bench/browser's npm packages, and
// takes minutes on two cores (building ./bench for js/wasm), so it runs
// only with WEBTENSOR_BENCH_BROWSER_TEST=1 (make bench-browser is the
// full run).
func TestPage(t *testing.T) {
	if os.Getenv("WEBTENSOR_BENCH_BROWSER_TEST") == "" {
		t.Skip("set WEBTENSOR_BENCH_BROWSER_TEST=1 (needs chromium and npm ci --prefix bench/browser)")
	}
	path := filepath.Join(t.TempDir(), "browser.json")
	var out bytes.Buffer
	require.NoError(t, run([]string{"-rounds", "1", "-min-time", "100ms", "-filter", `^add/1M$`, "-json", path}, &out, os.Stderr))
	t.Log("\n" + out.String())
	f, err := schema.Read(path)
	require.NoError(t, err)
	require.Len(t, f.Results, 2)
	for _, r := range f.Results {
		require.Empty(t, r.Error)
		require.Equal(t, "add/1M", r.Case)
		require.Positive(t, r.Median)
	}
	require.Contains(t, f.Machine.GPU, "Chromium")
	require.Regexp(t, `add/1M .* GB/s .* GB/s .*×`, out.String())
}
