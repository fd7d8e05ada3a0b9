package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/tensor"
)

// cnnStep opens the CPU and sets up the cnn-step case at side×side with
// the given batch; the step and its cleanup come back.
func cnnStep(tb testing.TB, side, batch int) (run func() *tensor.Tensor, done func()) {
	dev, err := tensor.Open("cpu")
	require.NoError(tb, err)
	run, free := cnnCase(side, batch).setup(dev)
	return run, free
}

// BenchmarkCNNStep is the cnn-step case as a Go benchmark, for
// -cpuprofile and -benchmem: one training step (forward, backward, Adam)
// of cmd/demo's network on a batch of 64 MNIST-sized images.
//
//	go test ./bench -run '^$' -bench CNNStep -benchmem -cpuprofile cpu.out
func BenchmarkCNNStep(b *testing.B) {
	run, done := cnnStep(b, 28, 64)
	defer done()
	run()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		run()
	}
}

// TestCNNStepAllocationsFlat: a CNN training step allocates as much on the
// thirtieth step as on the third, so nothing on the step's path (pooling
// and its backward, convolution scratch, the graph's records, Adam's
// state) grows with the steps.
func TestCNNStepAllocationsFlat(t *testing.T) {
	run, done := cnnStep(t, 12, 4)
	defer done()
	step := func() { run() }
	step()
	early := testing.AllocsPerRun(3, step)
	late := testing.AllocsPerRun(30, step)
	t.Logf("allocations per step: %.0f over 3 steps, %.0f over 30", early, late)
	require.LessOrEqual(t, late, early+2, "allocations per step grow with the steps")
}
