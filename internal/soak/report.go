package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

const mib = 1 << 20

// line is a sample as one progress line.
func (s Sample) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s  ops %10d  cycles %10d", s.At.Round(time.Second), s.Ops, s.Cycles)
	for _, d := range s.Devices {
		fmt.Fprintf(&b, "  %s live %.2f pooled %.2f MiB kernels %d", d.Device, float64(d.LiveBytes)/mib, float64(d.PooledBytes)/mib, d.Kernels)
	}
	fmt.Fprintf(&b, "  heap %.2f/%.2f MiB  rss %.1f MiB  goroutines %d",
		float64(s.HeapAlloc)/mib, float64(s.HeapInuse)/mib, float64(s.RSS)/mib, s.Goroutines)
	return b.String()
}

// WriteTable prints the samples (at most about 20 rows, evenly spaced),
// the verdicts and the summary.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "samples (warm-up %s, fitted after):\n", r.Warmup.Round(time.Second))
	stride := max(1, len(r.Samples)/20)
	for i, s := range r.Samples {
		if i%stride == 0 || i == len(r.Samples)-1 {
			fmt.Fprintln(w, s.line())
		}
	}
	fmt.Fprintln(w, "\nslopes:")
	for _, v := range r.Verdicts {
		fmt.Fprintln(w, v)
	}
	fmt.Fprintf(w, "\nsummary: %s on %s, %d rounds after a first of %s\n", r.Duration.Round(time.Second), strings.Join(r.Devices, "+"), r.Rounds-1, r.FirstRound.Round(time.Millisecond))
	fmt.Fprintf(w, "  ops run            %d\n", r.Ops)
	fmt.Fprintf(w, "  allocate/free      %d cycles\n", r.Cycles)
	fmt.Fprintf(w, "  train steps        %d (MLP and CNN), checkpoints %d\n", r.TrainSteps, r.Checkpoints)
	fmt.Fprintf(w, "  live bytes         peak %d, final %d\n", r.PeakLiveBytes, r.FinalLiveBytes)
	fmt.Fprintf(w, "  Go heap            final %.2f MiB\n", float64(r.FinalHeapAlloc)/mib)
	fmt.Fprintf(w, "  RSS                peak %.1f MiB, final %.1f MiB\n", float64(r.PeakRSS)/mib, float64(r.FinalRSS)/mib)
	for d, l := range r.LastLoss {
		fmt.Fprintf(w, "  last loss          %s: MLP %.4f, CNN %.4f\n", d, l[0], l[1])
	}
	verdict := "FLAT"
	if !r.Flat {
		verdict = "GROWING"
	}
	fmt.Fprintf(w, "  verdict            %s\n", verdict)
}

// WriteJSON writes the report as indented JSON to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
