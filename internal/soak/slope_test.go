package soak

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// line returns n points of a + b·t (t in minutes) every step, plus
// uniform noise of ±noise.
func line(r *rand.Rand, n int, step time.Duration, a, b, noise float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		at := time.Duration(i) * step
		pts[i] = Point{At: at, Value: a + b*at.Minutes() + noise*(2*r.Float64()-1)}
	}
	return pts
}

func TestSlopeRecoversLine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		a, b := r.Float64()*1e8, (r.Float64()-0.5)*1e6
		n := 3 + r.IntN(200)
		got, mean := Slope(line(r, n, time.Duration(1+r.IntN(20))*time.Second, a, b, 0))
		require.InDelta(t, b, got, 1e-6*math.Abs(b)+1e-3, "n=%d", n)
		require.Greater(t, mean, a-math.Abs(b)*60)
	}
	s, m := Slope([]Point{{At: time.Second, Value: 7}})
	require.Equal(t, [2]float64{0, 7}, [2]float64{s, m}, "one point has no slope")
	s, _ = Slope([]Point{{At: time.Second, Value: 1}, {At: time.Second, Value: 9}})
	require.Zero(t, s, "points at one instant have no slope")
}

// A flat metric with noise and a one-off step passes; the same metric
// with a steady leak added fails, on a 30-minute run and on a 6-second
// one, where the step term is wide but a leak is steep.
func TestCheckFlatAndLeaking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tol := DefaultTolerances["live"]
	cases := []struct {
		name     string
		n        int
		step     time.Duration
		leak     float64 // bytes per minute
		wantFlat bool
	}{
		{"30m flat", 120, 15 * time.Second, 0, true},
		{"30m leak 64 KiB/min", 120, 15 * time.Second, 64 << 10, false},
		{"6s flat", 24, 250 * time.Millisecond, 0, true},
		{"6s leak 10 MiB/min", 24, 250 * time.Millisecond, 10 << 20, false},
	}
	for _, c := range cases {
		pts := line(r, c.n, c.step, 1<<20, c.leak, 512)
		// A one-off step of half the tolerated step, a third of the way
		// in: a pool size class filled late.
		for i := c.n / 3; i < c.n; i++ {
			pts[i].Value += tol.Step / 2
		}
		v := Check("live", pts, tol)
		require.Equal(t, c.wantFlat, v.Flat, "%s: %v", c.name, v)
	}
}

// Shrinking is never a leak, and too few samples never pass.
func TestCheckShrinkingAndTooFew(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	v := Check("pooled", line(r, 50, time.Second, 1<<30, -100<<20, 0), DefaultTolerances["pooled"])
	require.True(t, v.Flat, "%v", v)
	v = Check("pooled", line(r, MinFitSamples-1, time.Second, 1<<20, 0, 0), DefaultTolerances["pooled"])
	require.False(t, v.Flat, "%v", v)
}

// The injected leak the soak test uses, simulated: a pool that hands out
// random sizes and keeps every 1000th buffer alive. Its live bytes must
// fail the check at the soak's allocation rate, and the same pool without
// the leak must pass.
func TestCheckCatchesHeldEveryNth(t *testing.T) {
	for _, leakEvery := range []int{0, 1000} {
		r := rand.New(rand.NewPCG(7, 8))
		const cyclesPerSample, base = 5000, 1 << 16
		var held float64
		var pts []Point
		for s := range 60 {
			for c := range cyclesPerSample {
				if leakEvery > 0 && (s*cyclesPerSample+c+1)%leakEvery == 0 {
					held += 4 * math.Exp(r.Float64()*math.Log(maxElems))
				}
			}
			pts = append(pts, Point{At: time.Duration(s) * time.Second, Value: base + held})
		}
		v := Check("live", pts, DefaultTolerances["live"])
		require.Equal(t, leakEvery == 0, v.Flat, "leakEvery=%d: %v", leakEvery, v)
	}
}
