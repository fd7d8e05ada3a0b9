//go:build cgo

package wgpu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// useAutotuneDir points the autotune cache at a fresh directory and
// forgets the tables already loaded.
func useAutotuneDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv(autotuneDirEnv, dir)
	t.Setenv(autotuneEnv, "")
	autotuneTables.Clear()
	t.Cleanup(func() { autotuneTables.Clear() })
	return dir
}

// TestAutotuneRoundTrip tunes a class, checks the file it writes, and that
// a fresh load (as a new process would) returns the same choice, which
// MatMul then uses.
func TestAutotuneRoundTrip(t *testing.T) { forEachTestDevice(t, testAutotuneRoundTrip) }

func testAutotuneRoundTrip(t *testing.T, d *Device) {
	dir := useAutotuneDir(t)
	name, err := d.AutotuneMatMul(hal.Float32, 40, 70, 36)
	require.NoError(t, err)
	path := filepath.Join(dir, adapterKey(d.info)+".json")
	require.FileExists(t, path)

	autotuneTables.Clear()
	g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: 40, k: 70, n: 36, batch: 1}
	c, ok := d.autotuned(g)
	require.True(t, ok, "the class is in the reloaded table")
	assert.Equal(t, name, c.String())
	assert.Equal(t, c, g.plan().config)

	// A table tuned among an older candidate list is tuned again.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f autotuneFile
	require.NoError(t, json.Unmarshal(data, &f))
	assert.Equal(t, autotuneCandidates, f.Candidates)
	f.Candidates--
	data, err = json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	autotuneTables.Clear()
	_, ok = d.autotuned(g)
	assert.False(t, ok, "a table of older candidates is dropped")
}

// TestAutotuneCorruptCache: an unreadable table is ignored.
func TestAutotuneCorruptCache(t *testing.T) { forEachTestDevice(t, testAutotuneCorruptCache) }

func testAutotuneCorruptCache(t *testing.T, d *Device) {
	dir := useAutotuneDir(t)
	path := filepath.Join(dir, adapterKey(d.info)+".json")
	for _, data := range []string{"{not json", `{"choices": {"float32/bfalse/m6/n6/k7": {"Kind": 0, "WX": 100000}}}`} {
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		autotuneTables.Clear()
		g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: 40, k: 70, n: 36, batch: 1}
		_, ok := d.autotuned(g)
		assert.False(t, ok, "%s", data)
		assert.Equal(t, d.matmulHeuristic(g), g.plan().config)
	}
}

// TestAutotuneConcurrent tunes from several goroutines at once, each
// forcing candidates through the process-wide override: afterwards no
// candidate may stay forced (each tuning restores the override it found,
// which is only right when tunings do not overlap), and concurrent
// MatMuls meeting one new class under WEBTENSOR_AUTOTUNE=1 agree on its
// choice.
func TestAutotuneConcurrent(t *testing.T) { forEachTestDevice(t, testAutotuneConcurrent) }

func testAutotuneConcurrent(t *testing.T, d *Device) {
	useAutotuneDir(t)
	t.Cleanup(func() { matmulOverride.Store(nil) }) // a failure here must not pin later tests
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			_, err := d.AutotuneMatMul(hal.Float32, 24+8*i, 40, 24)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Nil(t, matmulOverride.Load(), "a tuning left its candidate forced on every MatMul")

	t.Setenv(autotuneEnv, "1")
	g := &gemm{d: d, out: operand{View: hal.View{DType: hal.Float32}}, m: 20, k: 33, n: 17, batch: 1}
	got := make([]matmulConfig, 4)
	for i := range got {
		wg.Go(func() {
			c, ok := d.autotuned(g)
			assert.True(t, ok)
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got[1:] {
		assert.Equal(t, got[0], c)
	}
	assert.Nil(t, matmulOverride.Load())
}

// TestAutotuneRuns checks the repetitions per timing: one on software
// adapters whatever the size; on GPUs about autotuneFlops of work, at
// least one (a 4,096³ product alone) and at most autotuneMaxRuns.
func TestAutotuneRuns(t *testing.T) {
	for _, c := range []struct {
		hardware       bool
		batch, m, k, n int
		want           int
	}{
		{false, 1, 1024, 1024, 1024, 1},
		{false, 64, 8, 8, 8, 1},
		{true, 1, 4096, 4096, 4096, 1},
		{true, 1, 1024, 1024, 1024, 18}, // 4e10 / 2.15e9
		{true, 64, 256, 256, 256, 18},   // the bmm case, as much work
		{true, 1, 2048, 2048, 2048, 2},  // 4e10 / 1.7e10
		{true, 1, 256, 256, 256, autotuneMaxRuns},
		{true, 1, 2, 3, 2, autotuneMaxRuns},
	} {
		got := autotuneRuns(c.hardware, c.batch, c.m, c.k, c.n)
		assert.Equal(t, c.want, got, "%+v", c)
		if c.hardware && got > 1 && got < autotuneMaxRuns {
			work := 2 * float64(c.batch*c.m*c.k*c.n) * float64(got)
			assert.InDelta(t, autotuneFlops, work, 2*float64(c.batch*c.m*c.k*c.n), "%+v: %d runs", c, got)
		}
	}
}
