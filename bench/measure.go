package main

import (
	"slices"
	"time"
)

// timing says how long to measure each case.
type timing struct {
	minTime    time.Duration // measure at least this long in all
	minSamples int           // and take at least this many samples
	maxSamples int
}

// measurement is the outcome of timing one case, per iteration.
type measurement struct {
	median, best float64 // seconds
	samples      int
	iters        int // iterations per sample
}

// measure times run, which does one iteration of a case and must leave
// no work pending that sync does not wait for. The first call is a
// warm-up (kernel compilation, memory pools, lazy state) and is not
// counted; calibration then sizes the samples so that each lasts about
// minTime/minSamples (see calibrate), which keeps the timer's resolution and the sync's
// own cost out of short cases. Each sample runs its iterations back to
// back and then waits for the device once, as a user's loop would.
func measure(t timing, run func(), sync func() error) (measurement, error) {
	run()
	if err := sync(); err != nil {
		return measurement{}, err
	}
	perSample := t.minTime.Seconds() / float64(max(1, t.minSamples))
	iters, err := calibrate(perSample, run, sync)
	if err != nil {
		return measurement{}, err
	}
	var samples []float64
	began := time.Now()
	for len(samples) < t.minSamples || (time.Since(began) < t.minTime && len(samples) < t.maxSamples) {
		s := time.Now()
		for range iters {
			run()
		}
		if err := sync(); err != nil {
			return measurement{}, err
		}
		samples = append(samples, time.Since(s).Seconds()/float64(iters))
	}
	slices.Sort(samples)
	m := measurement{best: samples[0], samples: len(samples), iters: iters}
	if n := len(samples); n%2 == 1 {
		m.median = samples[n/2]
	} else {
		m.median = (samples[n/2-1] + samples[n/2]) / 2
	}
	return m, nil
}

// calibrate returns how many iterations fill a sample of perSample
// seconds. It doubles a batch until the batch lasts a quarter of that,
// rather than timing one iteration, so that one hiccup of a busy machine
// (a descheduled thread) cannot shrink the samples to a single short
// iteration.
func calibrate(perSample float64, run func(), sync func() error) (int, error) {
	for n := 1; ; n *= 2 {
		start := time.Now()
		for range n {
			run()
		}
		if err := sync(); err != nil {
			return 0, err
		}
		took := time.Since(start).Seconds()
		if took >= perSample/4 || n >= 1<<20 {
			return max(1, min(int(float64(n)*perSample/max(took, 1e-9)), 1<<20)), nil
		}
	}
}
