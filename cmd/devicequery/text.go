package main

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/webtensor/webtensor/hal"
)

// writeText prints one block per adapter, the default marked with "*",
// then the backends that listed nothing and why.
func writeText(w io.Writer, entries []entry, defaultChoice string, problems []string) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "tensor.Default() picks: %s\n", defaultChoice)
	for _, e := range entries {
		marker := " "
		if e.Default {
			marker = "*"
		}
		fmt.Fprintf(tw, "\n%s %s  %s\n", marker, e.Device, e.Name)
		for _, row := range [][2]string{
			{"vendor", e.Vendor},
			{"architecture", e.Architecture},
			{"driver", e.Driver},
			{"backend", e.Backend},
			{"type", e.Type},
			{"features", formatFeatures(e.Features)},
		} {
			fmt.Fprintf(tw, "    %s\t%s\n", row[0], orDash(row[1]))
		}
		fmt.Fprintf(tw, "    limits\t\n")
		for _, l := range limitRows(e.Limits) {
			fmt.Fprintf(tw, "      %s\t%s\n", l.name, l.value)
		}
		if e.OpenError != "" {
			fmt.Fprintf(tw, "    kernels\tunknown: %s\n", e.OpenError)
			continue
		}
		fmt.Fprintf(tw, "    kernels\t\n")
		for _, row := range kernelRows(e.Kernels) {
			fmt.Fprintf(tw, "      %s\t%s\n", row.name, row.value)
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(tw)
		for _, p := range problems {
			fmt.Fprintln(tw, p)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The "limits" heading shares the value column, so tabwriter pads it.
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// kernelRows groups the kernels compactly: one row per set of dtypes and
// kernel family, e.g. "float32,float16  unary: exp log …", in hal's
// kernel order.
func kernelRows(kernels map[string][]string) []limitRow {
	var rows []limitRow
	at := map[string]int{} // dtypes + family → row
	for _, k := range hal.Kernels() {
		dtypes, ok := kernels[k]
		if !ok || len(dtypes) == 0 {
			continue
		}
		family, op, hasOp := strings.Cut(k, ".")
		key := strings.Join(dtypes, ",")
		if !hasOp {
			family, op = "", k
		}
		if i, ok := at[key+" "+family]; ok {
			rows[i].value += " " + op
			continue
		}
		at[key+" "+family] = len(rows)
		value := op
		if hasOp {
			value = family + ": " + op
		}
		rows = append(rows, limitRow{key, value})
	}
	if len(rows) == 0 {
		rows = append(rows, limitRow{"none", "-"})
	}
	return rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatFeatures(features []string) string {
	if len(features) == 0 {
		return "none"
	}
	return strings.Join(features, ", ")
}

type limitRow struct{ name, value string }

// limitRows lists the limits under their JSON names, in declaration order,
// so text and JSON output agree and new hal limits show up unasked.
func limitRows(l hal.Limits) []limitRow {
	v := reflect.ValueOf(l)
	rows := make([]limitRow, 0, v.NumField())
	for i := range v.NumField() {
		field := v.Type().Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name == "" {
			name = field.Name
		}
		n := v.Field(i).Uint()
		value := fmt.Sprint(n)
		if strings.HasSuffix(field.Name, "Size") && n >= 1<<10 {
			value += " (" + formatBytes(n) + ")"
		}
		rows = append(rows, limitRow{name, value})
	}
	return rows
}

// formatBytes renders n in the largest binary unit that keeps it ≥ 1.
func formatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == float64(uint64(f)) {
		return fmt.Sprintf("%d %s", uint64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}
