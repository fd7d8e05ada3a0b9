//go:build js && wasm

package main

import (
	"fmt"
	"math"
	"syscall/js"
)

// chart draws the training loss, held-out loss and held-out accuracy of
// each epoch on a 2D canvas: the losses against the left axis (0 to the
// largest so far), the accuracy against the right one (0 to 100%).
type chart struct {
	ctx           js.Value
	width, height float64
	epochs        int
	points        []progress
}

// The plot area's margins, in canvas pixels.
const (
	marginLeft, marginRight, marginTop, marginBottom = 56.0, 56.0, 28.0, 40.0
)

var seriesColors = [3]string{"#1f77b4", "#ff7f0e", "#2ca02c"}

func newChart(canvas js.Value, epochs int) *chart {
	c := &chart{ctx: canvas.Call("getContext", "2d"), width: canvas.Get("width").Float(),
		height: canvas.Get("height").Float(), epochs: epochs}
	c.draw()
	return c
}

func (c *chart) add(p progress) {
	c.points = append(c.points, p)
	c.draw()
}

func (c *chart) draw() {
	ctx := c.ctx
	ctx.Call("clearRect", 0, 0, c.width, c.height)
	ctx.Set("fillStyle", "#fff")
	ctx.Call("fillRect", 0, 0, c.width, c.height)
	plotW, plotH := c.width-marginLeft-marginRight, c.height-marginTop-marginBottom
	maxLoss := 0.0
	for _, p := range c.points {
		maxLoss = math.Max(maxLoss, math.Max(p.loss, p.valLoss))
	}
	if maxLoss == 0 {
		maxLoss = 1
	}
	x := func(epoch int) float64 {
		return marginLeft + plotW*float64(epoch)/float64(max(c.epochs, 1))
	}
	yLoss := func(v float64) float64 { return marginTop + plotH*(1-v/maxLoss) }
	yAcc := func(v float64) float64 { return marginTop + plotH*(1-v) }

	// Axes, ticks and labels.
	ctx.Set("strokeStyle", "#888")
	ctx.Set("lineWidth", 1)
	ctx.Call("strokeRect", marginLeft, marginTop, plotW, plotH)
	ctx.Set("font", "12px sans-serif")
	ctx.Set("fillStyle", "#333")
	ctx.Set("textAlign", "center")
	for e := 0; e <= c.epochs; e += max(1, c.epochs/10) {
		ctx.Call("fillText", fmt.Sprint(e), x(e), c.height-marginBottom+16)
	}
	ctx.Call("fillText", "epoch", marginLeft+plotW/2, c.height-6)
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		ctx.Set("textAlign", "right")
		ctx.Call("fillText", fmt.Sprintf("%.2f", f*maxLoss), marginLeft-6, yLoss(f*maxLoss)+4)
		ctx.Set("textAlign", "left")
		ctx.Call("fillText", fmt.Sprintf("%.0f%%", 100*f), c.width-marginRight+6, yAcc(f)+4)
	}

	series := []struct {
		name  string
		value func(progress) float64
		y     func(float64) float64
	}{
		{"training loss", func(p progress) float64 { return p.loss }, yLoss},
		{"held-out loss", func(p progress) float64 { return p.valLoss }, yLoss},
		{"held-out accuracy", func(p progress) float64 { return p.valAccuracy }, yAcc},
	}
	for i, s := range series {
		ctx.Set("strokeStyle", seriesColors[i])
		ctx.Set("fillStyle", seriesColors[i])
		ctx.Set("lineWidth", 2)
		ctx.Call("beginPath")
		for j, p := range c.points {
			px, py := x(p.epoch), s.y(s.value(p))
			if j == 0 {
				ctx.Call("moveTo", px, py)
			} else {
				ctx.Call("lineTo", px, py)
			}
		}
		ctx.Call("stroke")
		for _, p := range c.points {
			ctx.Call("beginPath")
			ctx.Call("arc", x(p.epoch), s.y(s.value(p)), 3, 0, 2*math.Pi)
			ctx.Call("fill")
		}
		// Legend, top left inside the plot.
		ctx.Call("fillRect", marginLeft+10, marginTop+10+float64(i)*16, 12, 3)
		ctx.Set("fillStyle", "#333")
		ctx.Set("textAlign", "left")
		ctx.Call("fillText", s.name, marginLeft+28, marginTop+15+float64(i)*16)
	}
}
