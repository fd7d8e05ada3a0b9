//go:build js && wasm

// Command page is the program of cmd/webdemo's page, built for GOOS=js
// GOARCH=wasm: it trains cmd/demo's digits CNN on tensor.Default() (the
// page's WebGPU, or the CPU backend when the browser has none), drawing
// the loss and held-out accuracy of every epoch on a canvas, with the
// adapter's name and the throughput. Every line it logs also goes to the
// browser's console, where cmd/webdemo's test reads "webdemo: done".
//
// The URL's query may set epochs, batch, lr and seed; cmd/webdemo passes
// fallback=1 on to the program's environment as WEBTENSOR_WEBGPU_FALLBACK,
// asking for the browser's software adapter (SwiftShader).
package main

import (
	"fmt"
	"net/url"
	"strconv"
	"syscall/js"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

func main() {
	done := make(chan struct{})
	// Training blocks on GPU promises, which only settle while the
	// browser's event loop runs: a goroutine, never a js.FuncOf callback.
	go func() {
		defer close(done)
		if err := run(); err != nil {
			logf("webdemo: error: %v", err)
			setText("status", "error: "+err.Error())
		}
	}()
	<-done
}

func run() error {
	s, err := parseQuery(js.Global().Get("location").Get("search").String())
	if err != nil {
		return err
	}
	var dev *tensor.Device
	if err := tensor.Catch(func() { dev = tensor.Default() }); err != nil {
		return fmt.Errorf("opening a device: %w", err)
	}
	info := dev.Info()
	adapter := fmt.Sprintf("%s: %s (vendor %q, architecture %q, backend %s, %s)",
		dev.Name(), info.Name, info.Vendor, info.Architecture, info.Backend, info.Type)
	setText("adapter", adapter)
	logf("webdemo: device %s", adapter)

	trainSet, testSet, err := loadDigits(s.seed)
	if err != nil {
		return err
	}
	setText("status", fmt.Sprintf("training on %d digits, %d held out, %d epochs…", trainSet.Len(), testSet.Len(), s.epochs))
	c := newChart(js.Global().Get("document").Call("getElementById", "chart"), s.epochs)
	start := time.Now()
	var last progress
	err = train(s, dev, trainSet, testSet, func(p progress) {
		last = p
		c.add(p)
		setText("throughput", fmt.Sprintf("%.0f images/s (epoch %d: %.1f s for %d training images and the evaluation)",
			p.imagesPerSec, p.epoch, p.epochDuration.Seconds(), p.trainingImages))
		setText("status", fmt.Sprintf("epoch %d of %d: loss %.4f, held-out loss %.4f, held-out accuracy %.2f%%",
			p.epoch, s.epochs, p.loss, p.valLoss, 100*p.valAccuracy))
		logf("webdemo: epoch %d/%d loss=%.4f val_loss=%.4f val_accuracy=%.4f images_per_s=%.0f",
			p.epoch, s.epochs, p.loss, p.valLoss, p.valAccuracy, p.imagesPerSec)
	})
	if err != nil {
		return err
	}
	setText("status", fmt.Sprintf("done: held-out accuracy %.2f%% after %d epochs, %.1f s on %s",
		100*last.valAccuracy, s.epochs, time.Since(start).Seconds(), dev.Name()))
	logf("webdemo: done val_accuracy=%.4f epochs=%d seconds=%.1f device=%s",
		last.valAccuracy, s.epochs, time.Since(start).Seconds(), dev.Name())
	return nil
}

// parseQuery reads the settings from the URL's query ("?epochs=4&seed=2").
func parseQuery(search string) (settings, error) {
	s := defaultSettings
	q, err := url.ParseQuery(trimQuestion(search))
	if err != nil {
		return s, fmt.Errorf("the page's query %q: %w", search, err)
	}
	ints := map[string]*int{"epochs": &s.epochs, "batch": &s.batchSize}
	for name, p := range ints {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return s, fmt.Errorf("the page's query: %s=%q, want a positive integer", name, v)
			}
			*p = n
		}
	}
	if v := q.Get("seed"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return s, fmt.Errorf("the page's query: seed=%q, want an unsigned integer", v)
		}
		s.seed = n
	}
	if v := q.Get("lr"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) {
			return s, fmt.Errorf("the page's query: lr=%q, want a positive number", v)
		}
		s.lr = f
	}
	return s, nil
}

func trimQuestion(s string) string {
	if len(s) > 0 && s[0] == '?' {
		return s[1:]
	}
	return s
}

// logf writes a line to the browser's console and to the page's log.
func logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	js.Global().Get("console").Call("log", line)
	log := js.Global().Get("document").Call("getElementById", "log")
	if log.Truthy() {
		log.Set("textContent", log.Get("textContent").String()+line+"\n")
	}
}

func setText(id, text string) {
	if el := js.Global().Get("document").Call("getElementById", id); el.Truthy() {
		el.Set("textContent", text)
	}
}
