package train

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteSVG draws the named metrics against the epoch as an SVG chart of
// width × height points, one line with markers per metric and a legend;
// with no names it draws "loss" and, when recorded, "val_loss". Metrics
// on different scales (a loss and an accuracy) share one axis, so chart
// them separately when that matters. Epochs that lack a metric (or
// recorded NaN or an infinity) are skipped: its line joins the epochs
// on either side.
func (h *History) WriteSVG(w io.Writer, width, height float64, metrics ...string) error {
	if len(metrics) == 0 {
		metrics = []string{MetricLoss}
		if len(h.Epochs) > 0 {
			if _, ok := h.Epochs[0].Metrics[ValPrefix+MetricLoss]; ok {
				metrics = append(metrics, ValPrefix+MetricLoss)
			}
		}
	}
	if len(h.Epochs) == 0 {
		return fmt.Errorf("train: WriteSVG: the history has no epochs")
	}
	p := plot.New()
	p.Title.Text = "Training history"
	p.X.Label.Text = "epoch"
	p.Legend.Top = true
	for i, name := range metrics {
		var pts plotter.XYs
		for _, e := range h.Epochs {
			if v, ok := e.Metrics[name]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				pts = append(pts, plotter.XY{X: float64(e.Epoch), Y: v})
			}
		}
		if len(pts) == 0 {
			return fmt.Errorf("train: WriteSVG: no epoch recorded metric %q", name)
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("train: WriteSVG: %s: %w", name, err)
		}
		line.Color = plotutil.Color(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	wt, err := p.WriterTo(vg.Length(width), vg.Length(height), "svg")
	if err != nil {
		return fmt.Errorf("train: WriteSVG: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("train: WriteSVG: %w", err)
	}
	return nil
}
