package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/webtensor/webtensor/bench/schema"
)

// table prints results as they come, one aligned row each, so that a
// long run shows its progress.
type table struct{ w io.Writer }

const rowFormat = "%-36s %-10s %3s %12s %12s  %-7s %s\n"

func newTable(w io.Writer) *table {
	fmt.Fprintf(w, rowFormat, "case", "device", "T", "median", "best", "unit", "samples")
	fmt.Fprintln(w, strings.Repeat("-", 98))
	return &table{w}
}

func (t *table) row(r schema.Result) {
	if r.Error != "" {
		fmt.Fprintf(t.w, rowFormat, r.Case, r.Device, fmt.Sprint(r.Threads), "-", "-", r.Unit, "error: "+r.Error)
		return
	}
	fmt.Fprintf(t.w, rowFormat, r.Case, r.Device, fmt.Sprint(r.Threads), schema.Format(r.Median), schema.Format(r.Best), r.Unit,
		fmt.Sprintf("%d×%d", r.Samples, r.Iters))
}

// ofCopy prints each GB/s row as a fraction of its device's copy
// (schema.Result.OfCopy), after the table.
func (t *table) ofCopy(rs []schema.Result) {
	header := false
	for _, r := range rs {
		if r.OfCopy <= 0 || r.Group == "copy" {
			continue
		}
		if !header {
			fmt.Fprintf(t.w, "\nGB/s as a fraction of the device-to-device copy (copy/N, same device and threads):\n")
			header = true
		}
		fmt.Fprintf(t.w, "%-36s %-10s %3d %11.2f×\n", r.Case, r.Device, r.Threads, r.OfCopy)
	}
}
