package profile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/profile"
	"github.com/webtensor/webtensor/tensor"
)

// Profile a few ops, print the table of per-kernel times and write a
// trace for chrome://tracing or Perfetto. The CPU backend does not time
// kernels, so its ops are timed on the host; a WebGPU device with
// timestamp-query times its kernels on the device.
func Example() {
	dev, err := tensor.Open("cpu")
	if err != nil {
		panic(err)
	}
	a := tensor.Ones(dev, 64, 32)
	b := tensor.Ones(dev, 32, 16)
	defer a.Release()
	defer b.Release()

	prof, err := profile.Run(dev, func() error {
		for range 3 {
			c := tensor.MatMul(a, b)
			s := c.Softmax(1)
			c.Release()
			s.Release()
		}
		return dev.Sync()
	})
	if err != nil {
		panic(err)
	}
	prof.WriteTable(os.Stderr) // times vary, so not part of the output

	trace := filepath.Join(os.TempDir(), "webtensor-example-trace.json")
	if err := prof.WriteTraceFile(trace); err != nil {
		panic(err)
	}
	defer os.Remove(trace)

	rows := prof.KernelRows() // largest total first; sorted by name here
	slices.SortFunc(rows, func(x, y profile.Row) int { return strings.Compare(x.Name, y.Name) })
	for _, r := range rows {
		fmt.Println(r.Name, r.Calls)
	}
	fmt.Println("clock:", prof.Clock, "kernels timed by the backend:", prof.HasKernels)
	// Output:
	// MatMul 3
	// Softmax 3
	// clock: host kernels timed by the backend: false
}
