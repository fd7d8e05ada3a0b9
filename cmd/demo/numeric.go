package main

import (
	"math"
	"math/rand/v2"
	"time"
)

// randomMatrix returns n×n values uniform in [-1, 1).
func randomMatrix(rng *rand.Rand, n int) []float32 {
	m := make([]float32, n*n)
	for i := range m {
		m[i] = rng.Float32()*2 - 1
	}
	return m
}

// maxAbsDiff is the largest |a[i] - b[i]|; NaN anywhere makes it NaN, so
// that a broken kernel cannot pass the tolerance check.
func maxAbsDiff(a, b []float32) float64 {
	worst := 0.0
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) {
			return math.NaN()
		}
		worst = math.Max(worst, d)
	}
	return worst
}

func maxAbs(a []float32) float64 {
	worst := 0.0
	for _, v := range a {
		worst = math.Max(worst, math.Abs(float64(v)))
	}
	return worst
}

// seconds guards the GFLOPS division against a zero duration on coarse
// clocks.
func seconds(d time.Duration) float64 {
	return math.Max(d.Seconds(), 1e-9)
}
