package soak

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// shortConfig is the soak in miniature: long enough after a warm-up for a
// dozen samples, small rounds so that a loaded machine still gets many.
func shortConfig(dev *tensor.Device) Config {
	return Config{
		Devices:         []*tensor.Device{dev},
		Duration:        8 * time.Second,
		Warmup:          3 * time.Second,
		SampleEvery:     250 * time.Millisecond,
		AllocCycles:     300,
		CheckpointEvery: 5,
	}
}

// The short soak: every metric flat after the warm-up, on the CPU and on
// WebGPU (mandatory under CI=true), with real work done.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak takes seconds")
	}
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		rep, err := Run(context.Background(), shortConfig(dev))
		var b strings.Builder
		if rep != nil {
			rep.WriteTable(&b)
		}
		require.NoError(t, err, b.String())
		t.Log("\n" + b.String())
		require.True(t, rep.Flat)
		require.Greater(t, rep.Cycles, int64(1000), "allocate/free cycles")
		require.Greater(t, rep.TrainSteps, int64(6))
		require.Positive(t, rep.Checkpoints)
		for _, v := range rep.Verdicts {
			require.GreaterOrEqual(t, v.Samples, MinFitSamples, "%v", v)
		}
		// Everything the run made is released: the device is back where
		// it was before the models existed.
		require.NoError(t, settle([]*tensor.Device{dev}))
		require.LessOrEqual(t, dev.Stats().LiveBytes, rep.Samples[0].Devices[0].LiveBytes)
	})
}

// The same soak with a leak injected (every 1000th allocated tensor held)
// must fail, and name the device's live bytes as growing: the checks can
// fail.
func TestShortSoakCatchesInjectedLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak takes seconds")
	}
	dev := testdevice.CPU(t)
	cfg := shortConfig(dev)
	cfg.Duration, cfg.Warmup = 5*time.Second, 2*time.Second
	cfg.LeakEvery = 1000
	rep, err := Run(context.Background(), cfg)
	require.True(t, errors.Is(err, ErrGrowing), "err = %v", err)
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
	for _, v := range rep.Verdicts {
		if v.Metric == "live:"+dev.Name() {
			require.False(t, v.Flat, "%v", v)
			return
		}
	}
	t.Fatalf("no live-bytes verdict for %s", dev.Name())
}
