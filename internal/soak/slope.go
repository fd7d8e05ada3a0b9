package soak

import (
	"fmt"
	"math"
	"time"
)

// Point is one sample of a metric: when it was taken (from the start of
// the run) and its value (bytes, or a count for goroutines).
type Point struct {
	At    time.Duration
	Value float64
}

// Slope fits value = a + b·t by least squares over pts and returns b in
// units per minute and the mean value (the level the relative tolerance
// scales with). Fewer than two points, or all at one instant, give 0.
func Slope(pts []Point) (perMinute, mean float64) {
	n := float64(len(pts))
	if n < 2 {
		if n == 1 {
			mean = pts[0].Value
		}
		return 0, mean
	}
	var st, sv float64
	for _, p := range pts {
		st += p.At.Minutes()
		sv += p.Value
	}
	mt, mv := st/n, sv/n
	var cov, vart float64
	for _, p := range pts {
		dt := p.At.Minutes() - mt
		cov += dt * (p.Value - mv)
		vart += dt * dt
	}
	if vart == 0 {
		return 0, mv
	}
	return cov / vart, mv
}

// Tolerance bounds how fast a metric may grow after warm-up for it to
// count as flat. Only growth is bounded: a metric that shrinks (the
// pool trimming, the heap returning pages) is not a leak.
//
// The allowed slope, in units per minute, is
//
//	PerMinute + Rel·level + Step/window
//
// where level is the metric's mean over the fitted window and window its
// length in minutes. PerMinute is the absolute drift tolerated on a long
// run; Rel scales it with the level, since allocator noise grows with the
// size of the heap or mapping; Step is a one-off jump (a new malloc arena,
// a pool bucket filled late) that a least-squares line through a short
// window turns into a steep slope, so it is spread over the window: it
// dominates a seconds-long test and fades on a 30-minute run, where the
// per-minute terms decide.
type Tolerance struct {
	PerMinute float64
	Rel       float64
	Step      float64
}

// Allowed returns the largest slope (units per minute) that counts as
// flat for a metric at level over a window.
func (tol Tolerance) Allowed(level float64, window time.Duration) float64 {
	a := tol.PerMinute + tol.Rel*math.Abs(level)
	if m := window.Minutes(); m > 0 {
		a += tol.Step / m
	}
	return a
}

// Verdict is the fit of one metric and whether it stayed flat.
type Verdict struct {
	Metric    string  `json:"metric"`
	Samples   int     `json:"samples"`
	Level     float64 `json:"level"`
	PerMinute float64 `json:"slope_per_minute"`
	Allowed   float64 `json:"allowed_per_minute"`
	Flat      bool    `json:"flat"`
}

func (v Verdict) String() string {
	state := "flat"
	switch {
	case v.Samples < MinFitSamples:
		state = fmt.Sprintf("TOO FEW SAMPLES (%d of %d)", v.Samples, MinFitSamples)
	case !v.Flat:
		state = "GROWING"
	}
	return fmt.Sprintf("%-24s level %14.0f  slope %+12.1f/min  allowed %12.1f/min  %s",
		v.Metric, v.Level, v.PerMinute, v.Allowed, state)
}

// Check fits pts and compares the slope with tol.
func Check(metric string, pts []Point, tol Tolerance) Verdict {
	slope, level := Slope(pts)
	var window time.Duration
	if len(pts) > 1 {
		window = pts[len(pts)-1].At - pts[0].At
	}
	allowed := tol.Allowed(level, window)
	return Verdict{
		Metric: metric, Samples: len(pts), Level: level,
		PerMinute: slope, Allowed: allowed,
		// Too few points say nothing about a trend: not flat, so a run
		// too short to judge fails rather than passing vacuously.
		Flat: len(pts) >= MinFitSamples && slope <= allowed,
	}
}

// MinFitSamples is the fewest post-warm-up samples a verdict needs.
const MinFitSamples = 5
