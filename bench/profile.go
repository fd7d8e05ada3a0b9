package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/webtensor/webtensor/profile"
	"github.com/webtensor/webtensor/tensor"
)

// profileIters is how many iterations of a case -profile records: enough
// to average over, few enough that a profiled pass per kernel stays short.
const profileIters = 20

// profileCase runs profileIters more iterations of a case under the
// profiler and prints, per kernel, its calls and device time per
// iteration, against the case's measured median. The difference between
// the two is what the device spends outside kernels (barriers between
// passes, submission, waiting), as far as the profiler's own splitting
// into one pass per kernel leaves it comparable.
func profileCase(w io.Writer, dev *tensor.Device, name string, m measurement, run func(), sync func() error) {
	p, err := profile.Run(dev, func() error {
		for range profileIters {
			run()
		}
		return sync()
	})
	if err != nil {
		fmt.Fprintf(w, "profile %s: %v\n", name, err)
		return
	}
	perIter := func(d time.Duration) time.Duration { return d / profileIters }
	fmt.Fprintf(w, "profile %s on %s (%s): kernels %v per iteration, measured median %v\n",
		name, dev.Name(), p.Clock, perIter(p.TotalKernelTime()).Round(10*time.Nanosecond),
		time.Duration(m.median*float64(time.Second)).Round(10*time.Nanosecond))
	for k, row := range p.KernelRows() {
		if k == 6 {
			break
		}
		name := strings.Join(strings.Fields(row.Name), " ")
		if r := []rune(name); len(r) > 60 {
			name = string(r[:59]) + "…"
		}
		fmt.Fprintf(w, "  %-60s %4d calls/iter  %10v/iter  mean %v  min %v\n", name,
			row.Calls/profileIters, perIter(row.Total).Round(10*time.Nanosecond), row.Mean.Round(10*time.Nanosecond), row.Min.Round(10*time.Nanosecond))
	}
}
