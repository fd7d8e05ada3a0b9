// Command soak runs webtensor's leak test (internal/soak) for a duration:
// allocate/free cycles, MLP and CNN training steps, mixed ops and
// checkpoint round trips on each device, sampling pool live and pooled
// bytes, the Go heap, RSS and goroutines; after the warm-up each metric's
// least-squares slope must be ≈ 0. It prints a table and a summary and
// exits 1 when a metric grew or the work failed.
//
// Usage:
//
//	go run ./cmd/soak [-duration 30m] [-device cpu|webgpu|all] [-report soak.json]
//
// make soak DURATION=30m runs it on every device.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/webtensor/webtensor/internal/soak"
	"github.com/webtensor/webtensor/tensor"
)

func main() {
	duration := flag.Duration("duration", time.Minute, "how long to run")
	device := flag.String("device", "all", "cpu, webgpu, or all (the CPU and WebGPU when there is one)")
	report := flag.String("report", "", "write the report as JSON to this path")
	warmup := flag.Duration("warmup", 0, "how long the fit ignores at the start (default a fifth of -duration)")
	every := flag.Duration("sample", 0, "sampling interval (default duration/120)")
	quiet := flag.Bool("quiet", false, "no line per sample")
	flag.Parse()
	if err := run(*duration, *warmup, *every, *device, *report, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(duration, warmup, every time.Duration, device, reportPath string, quiet bool) error {
	// The soak measures each device's own pool: placement must not move
	// work between devices.
	tensor.SetPlacement(tensor.Explicit)
	devs, err := openDevices(device)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := soak.Config{Devices: devs, Duration: duration, Warmup: warmup, SampleEvery: every}
	if !quiet {
		cfg.Progress = os.Stdout
	}
	rep, err := soak.Run(ctx, cfg)
	if rep != nil {
		fmt.Println()
		rep.WriteTable(os.Stdout)
		if reportPath != "" {
			if werr := rep.WriteJSON(reportPath); werr != nil {
				return errors.Join(err, werr)
			}
		}
	}
	return err
}

func openDevices(which string) ([]*tensor.Device, error) {
	var names []string
	switch which {
	case "cpu", "webgpu":
		names = []string{which}
	case "all":
		names = []string{"cpu", "webgpu"}
	default:
		return nil, fmt.Errorf("-device %q: want cpu, webgpu or all", which)
	}
	var devs []*tensor.Device
	for _, n := range names {
		d, err := tensor.Open(n)
		if err != nil {
			if which == "all" && n == "webgpu" {
				fmt.Fprintf(os.Stderr, "soak: no WebGPU device (%v); running on the CPU only\n", err)
				continue
			}
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}
