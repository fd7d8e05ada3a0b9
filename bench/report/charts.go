package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/webtensor/webtensor/bench/schema"
)

// chart is one figure: a group's speed against its size, a line per
// implementation, device and thread count.
type chart struct {
	group, title, x, y string
}

var charts = []chart{
	{"matmul", "float32 matrix product C = A·B (n×n)", "n", "GFLOPS"},
	{"add", "elementwise add, float32", "elements", "GB/s (3 × 4 bytes an element)"},
	{"relu", "ReLU, float32", "elements", "GB/s (2 × 4 bytes an element)"},
}

// seriesLabel names the line a result belongs to.
func seriesLabel(r schema.Result) string {
	if r.Backend == "cpu" {
		return fmt.Sprintf("%s cpu T=%d", r.Impl, r.Threads)
	}
	return fmt.Sprintf("%s %s (%s)", r.Impl, r.Device, r.Backend)
}

// writeCharts draws every chart that has data into dir as SVG and
// returns the paths written.
func (m *merged) writeCharts(dir string) ([]string, error) {
	var written []string
	for _, c := range charts {
		series := map[string]plotter.XYs{}
		for _, r := range m.results {
			if r.Group != c.group || r.Error != "" || r.Median <= 0 || r.Size <= 0 {
				continue
			}
			l := seriesLabel(r)
			series[l] = append(series[l], plotter.XY{X: r.Size, Y: r.Median})
		}
		if len(series) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text, p.Y.Label.Text = c.x, c.y
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
		for i, label := range slices.Sorted(maps.Keys(series)) {
			pts := series[label]
			slices.SortFunc(pts, func(a, b plotter.XY) int {
				switch {
				case a.X < b.X:
					return -1
				case a.X > b.X:
					return 1
				}
				return 0
			})
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return written, fmt.Errorf("chart %s, %s: %w", c.group, label, err)
			}
			line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
			line.Dashes = plotutil.Dashes(i / len(plotutil.SoftColors))
			points.Shape = plotutil.Shape(i)
			p.Add(line, points)
			p.Legend.Add(label, line, points)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return written, err
		}
		path := filepath.Join(dir, c.group+".svg")
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return written, fmt.Errorf("chart %s: %w", c.group, err)
		}
		written = append(written, path)
	}
	return written, nil
}
