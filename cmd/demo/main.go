// Command demo multiplies two random n×n matrices on tensor.Default() (or
// the device named by -device) and on the CPU backend, and compares the
// timings and the results.
//
// Usage:
//
//	go run ./cmd/demo [-n 1024] [-device webgpu:0]
//
// Each timing covers the product and the read-back of the result, after
// one untimed warm-up run that absorbs kernel compilation and first-use
// allocation. The exit status is 1 when the results differ by more than
// float32 rounding explains.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

func main() {
	n := flag.Int("n", 1024, "matrix size: multiply two n×n matrices")
	deviceName := flag.String("device", "", "first device (default: tensor.Default(), see WEBTENSOR_DEVICE)")
	flag.Parse()
	if err := run(*n, *deviceName); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(n int, deviceName string) error {
	if n < 1 {
		return fmt.Errorf("-n must be at least 1, got %d", n)
	}
	first, err := openFirst(deviceName)
	if err != nil {
		return err
	}
	cpu, err := tensor.Open("cpu")
	if err != nil {
		return err
	}

	if first == cpu {
		fmt.Println("the first device is the CPU: both runs use the CPU backend (go run ./cmd/devicequery lists GPUs)")
	}

	rng := rand.New(rand.NewPCG(1, 2))
	a, b := randomMatrix(rng, n), randomMatrix(rng, n)

	fmt.Printf("%d×%d · %d×%d, float32; times include the read-back, after one untimed warm-up\n", n, n, n, n)
	got, firstRun, err := timeMatMul(first, a, b, n)
	if err != nil {
		return err
	}
	want, cpuRun, err := timeMatMul(cpu, a, b, n)
	if err != nil {
		return err
	}
	flops := 2 * float64(n) * float64(n) * float64(n)
	for _, r := range []struct {
		dev     *tensor.Device
		elapsed time.Duration
	}{{first, firstRun}, {cpu, cpuRun}} {
		fmt.Printf("  %-44s %10.3f ms  %8.1f GFLOPS\n", r.dev, seconds(r.elapsed)*1e3, flops/seconds(r.elapsed)/1e9)
	}

	diff, scale := maxAbsDiff(got, want), maxAbs(want)
	tolerance := 1e-3 * scale
	fmt.Printf("max |difference| %.3g (tolerance %.3g = 1e-3 × max |result| %.3g)\n", diff, tolerance, scale)
	if !(diff <= tolerance) {
		return fmt.Errorf("%s and %s disagree beyond float32 rounding", first.Name(), cpu.Name())
	}
	return nil
}

func openFirst(name string) (*tensor.Device, error) {
	if name == "" {
		var dev *tensor.Device
		// Default panics when WEBTENSOR_DEVICE names a device it cannot open.
		err := tensor.Catch(func() { dev = tensor.Default() })
		return dev, err
	}
	return tensor.Open(name)
}

// timeMatMul uploads a and b to dev, then times a·b including the
// read-back. The first, untimed product compiles kernels and warms pools.
func timeMatMul(dev *tensor.Device, a, b []float32, n int) ([]float32, time.Duration, error) {
	ta, tb := tensor.FromFloat32(dev, a, n, n), tensor.FromFloat32(dev, b, n, n)
	defer ta.Release()
	defer tb.Release()

	product := func() ([]float32, error) {
		c := tensor.MatMul(ta, tb)
		defer c.Release()
		return c.Float32s()
	}
	if _, err := product(); err != nil {
		return nil, 0, fmt.Errorf("warm-up on %s: %w", dev.Name(), err)
	}
	start := time.Now()
	out, err := product()
	elapsed := time.Since(start)
	if err != nil {
		return nil, 0, fmt.Errorf("on %s: %w", dev.Name(), err)
	}
	return out, elapsed, nil
}
