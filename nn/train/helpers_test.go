package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/nn"
	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

var (
	cpuDevice     = testdevice.CPU
	forEachDevice = testdevice.ForEach
)

func mse(out, y *graph.Value) *graph.Value { return nn.MSELoss(out, y) }

func crossEntropy(out, y *graph.Value) *graph.Value { return nn.CrossEntropy(out, y, 0) }

// regression is n samples of 3 random features with the target
// x·(0.5, −1, 2) + 0.25 plus noise, one number per sample ([n, 1]).
func regression(n int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &data.Dataset{Shape: []int{3}, TargetShape: []int{1}}
	w := []float64{0.5, -1, 2}
	for range n {
		y := 0.25 + 0.1*rng.NormFloat64()
		for j := range 3 {
			x := float32(rng.Float64()*2 - 1)
			d.X = append(d.X, x)
			y += w[j] * float64(x)
		}
		d.Targets = append(d.Targets, float32(y))
	}
	return d
}

// blobs is n samples of 2 features in 3 classes, each class around its
// own centre.
func blobs(n int, seed uint64) *data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 2))
	centres := [][2]float64{{1, 1}, {-1, 1}, {0, -1}}
	d := &data.Dataset{Shape: []int{2}}
	for range n {
		c := rng.IntN(3)
		d.X = append(d.X, float32(centres[c][0]+0.6*rng.NormFloat64()), float32(centres[c][1]+0.6*rng.NormFloat64()))
		d.Y = append(d.Y, int32(c))
	}
	return d
}

// params reads a module's parameters and buffers to the host in float64.
func params(t testing.TB, m nn.Module) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, p := range append(m.Parameters(), m.Buffers()...) {
		v, err := p.Value.Float32s()
		require.NoError(t, err)
		f := make([]float64, len(v))
		for i, x := range v {
			f[i] = float64(x)
		}
		out[p.Name] = f
	}
	return out
}

// linearLoss64 is the mean squared error of x·wᵀ + b over samples idx of
// d, in float64.
func linearLoss64(d *data.Dataset, w []float64, b float64, idx []int) float64 {
	sum := 0.0
	for _, i := range idx {
		r := b - float64(d.Targets[i])
		for j := range w {
			r += w[j] * float64(d.X[3*i+j])
		}
		sum += r * r
	}
	return sum / float64(len(idx))
}

// sgdEpoch64 runs one epoch of plain SGD on the MSE of a linear model in
// float64 over batches order, updating w and b, and returns the mean
// training loss over samples (each batch's loss before its step, weighted
// by its size), as Run defines it.
func sgdEpoch64(d *data.Dataset, w []float64, b *float64, lr float64, order [][]int) float64 {
	total := 0.0
	for _, idx := range order {
		total += linearLoss64(d, w, *b, idx) * float64(len(idx))
		n := float64(len(idx))
		gw := make([]float64, len(w))
		gb := 0.0
		for _, i := range idx {
			r := *b - float64(d.Targets[i])
			for j := range w {
				r += w[j] * float64(d.X[3*i+j])
			}
			for j := range w {
				gw[j] += 2 * r * float64(d.X[3*i+j]) / n
			}
			gb += 2 * r / n
		}
		for j := range w {
			w[j] -= lr * gw[j]
		}
		*b -= lr * gb
	}
	return total / float64(d.Len())
}

func all(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// relClose checks got against want within tol relative to max(|want|, 1e-3).
func relClose(t *testing.T, want, got, tol float64, msg string, args ...any) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(got-want), tol*math.Max(math.Abs(want), 1e-3), append([]any{msg + ": want %v, got %v"}, append(args, want, got)...)...)
}

func newLinear(dev *tensor.Device, in, out int, seed uint64) *nn.Linear {
	return nn.NewLinear(dev, in, out, true, tensor.NewGenerator(seed))
}
