package train

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// barInterval is how often the live bar reads the loss back: each read
// waits for the device, so not after every step.
const barInterval = 100 * time.Millisecond

// reporter writes the progress display: a live bar per epoch on a
// terminal (or with BarOn) and one summary line per epoch.
type reporter struct {
	out      io.Writer // nil: silent
	barOut   io.Writer
	showBar  bool
	epochs   int
	bar      *progressbar.ProgressBar
	desc     string
	start    time.Time
	lastRead time.Time
	done     int
}

func newReporter(c *Config) *reporter {
	if c.Silent {
		return &reporter{}
	}
	out := c.Output
	if out == nil {
		out = os.Stderr
	}
	barOut := c.BarOutput
	if barOut == nil {
		barOut = out
	}
	show := c.Bar == BarOn
	if c.Bar == BarAuto {
		f, ok := barOut.(*os.File)
		show = ok && term.IsTerminal(int(f.Fd()))
	}
	return &reporter{out: out, barOut: barOut, showBar: show, epochs: c.Epochs}
}

func (r *reporter) startEpoch(epoch, samples int) {
	if !r.showBar {
		return
	}
	r.desc = fmt.Sprintf("epoch %d/%d", epoch, r.epochs)
	r.bar = progressbar.NewOptions(samples,
		progressbar.OptionSetWriter(r.barOut),
		progressbar.OptionSetDescription(r.desc),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(barInterval),
		progressbar.OptionClearOnFinish(),
	)
	r.start, r.lastRead, r.done = time.Now(), time.Now(), 0
}

// batchDone advances the bar by n samples; loss reads the batch's loss,
// which only the bar needs and only every barInterval.
func (r *reporter) batchDone(n int, loss func() (float64, error)) {
	if r.bar == nil {
		return
	}
	r.done += n
	if time.Since(r.lastRead) >= barInterval {
		if v, err := loss(); err == nil {
			rate := float64(r.done) / time.Since(r.start).Seconds()
			r.bar.Describe(fmt.Sprintf("%s  loss %.4f  %.0f samples/s", r.desc, v, rate))
		}
		r.lastRead = time.Now()
	}
	_ = r.bar.Add(n)
}

// endEpoch clears the bar and writes the epoch's line.
func (r *reporter) endEpoch(e Epoch) {
	if r.bar != nil {
		_ = r.bar.Finish()
		r.bar = nil
	}
	if r.out != nil {
		fmt.Fprintln(r.out, formatEpoch(e, r.epochs))
	}
}

// abandon clears a bar left by a cancelled epoch.
func (r *reporter) abandon() {
	if r.bar != nil {
		_ = r.bar.Exit()
		r.bar = nil
	}
}

// formatEpoch is an epoch's summary line: the loss first, then the other
// metrics by name, accuracies as percentages, then the throughput.
func formatEpoch(e Epoch, epochs int) string {
	var b strings.Builder
	width := max(2, len(fmt.Sprint(epochs)))
	fmt.Fprintf(&b, "epoch %*d/%d", width, e.Epoch, epochs)
	names := make([]string, 0, len(e.Metrics))
	for name := range e.Metrics {
		if name != MetricLoss && name != MetricThroughput && name != MetricLR {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if v, ok := e.Metrics[MetricLoss]; ok {
		fmt.Fprintf(&b, "  loss %.4f", v)
	}
	for _, name := range names {
		v := e.Metrics[name]
		if strings.HasSuffix(name, MetricAccuracy) {
			fmt.Fprintf(&b, "  %s %6.2f%%", name, 100*v)
		} else {
			fmt.Fprintf(&b, "  %s %.4f", name, v)
		}
	}
	if v, ok := e.Metrics[MetricThroughput]; ok {
		fmt.Fprintf(&b, "  %6.0f samples/s", v)
	}
	return b.String()
}
