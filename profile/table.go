package profile

import (
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// nameWidth is where the table cuts long kernel names (a WebGPU kernel's
// name spells out its variant); the trace keeps them whole.
const nameWidth = 60

// WriteTable writes the kernel summary (calls, total, mean, min, max,
// share of the total per kernel name, largest first) and, where the
// kernels were timed apart from the ops, the op summary, as aligned text.
// The first lines name the device and the clock.
func (p *Profile) WriteTable(w io.Writer) error {
	var b strings.Builder
	what := "kernels"
	if !p.HasKernels {
		what = "ops"
	}
	fmt.Fprintf(&b, "profile of %s: %d %s, %v wall\n", p.Device, len(p.Kernels), what, round(p.Wall))
	if p.HasKernels {
		fmt.Fprintf(&b, "kernels timed on the %s clock: %s\n\n", p.Clock, p.ClockNote)
		writeRows(&b, "Kernel", p.KernelRows(), p.TotalKernelTime())
		if len(p.Ops) > 0 {
			b.WriteString("\nops timed on the host around each call (issue time: the device runs them later)\n\n")
			writeRows(&b, "Op", p.OpRows(), total(p.Ops))
		}
	} else {
		fmt.Fprintf(&b, "%s\n\n", p.ClockNote)
		writeRows(&b, "Op", p.KernelRows(), p.TotalKernelTime())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRows(b *strings.Builder, title string, rows []Row, sum time.Duration) {
	cells := [][]string{{title, "Calls", "Total", "Mean", "Min", "Max", "Share"}}
	calls := 0
	for _, r := range rows {
		cells = append(cells, []string{cut(r.Name), fmt.Sprint(r.Calls), dur(r.Total), dur(r.Mean), dur(r.Min), dur(r.Max), fmt.Sprintf("%.1f%%", 100*r.Share)})
		calls += r.Calls
	}
	share := "0.0%"
	if sum > 0 {
		share = "100.0%"
	}
	cells = append(cells, []string{"Total", fmt.Sprint(calls), dur(sum), "", "", "", share})
	width := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	rule := func() {
		for i, w := range width {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat("-", w))
		}
		b.WriteByte('\n')
	}
	for n, row := range cells {
		if n == 1 || n == len(cells)-1 {
			rule()
		}
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + pad) // names on the left
			default:
				b.WriteString("  " + pad + c) // numbers on the right
			}
		}
		b.WriteByte('\n')
	}
}

// cut shortens a name to nameWidth runes. A cut name ends with its key
// (Key), so that two names that differ only past the cut stay apart and
// can be found in the trace, whose events carry the full name and key.
func cut(name string) string {
	short := strings.Join(strings.Fields(name), " ")
	if utf8.RuneCountInString(short) <= nameWidth {
		return short
	}
	key := " #" + Key(name)
	r := []rune(short)
	return string(r[:nameWidth-utf8.RuneCountInString(key)-1]) + "…" + key
}

// Key is a short stable hash of an event name: the table shows it after a
// name too long to print whole, and the trace has it in every event's
// arguments.
func Key(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%06x", h.Sum32()&0xffffff)
}

// dur formats d with three significant decimals in a unit that suits it,
// as torch.profiler's table does.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3fus", float64(d)/float64(time.Microsecond))
	}
}

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
