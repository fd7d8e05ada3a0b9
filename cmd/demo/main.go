// Command demo trains a small convolutional network to read handwritten
// digits, on tensor.Default() (or the device named by -device), and
// reports its accuracy on digits it did not train on.
//
// Usage:
//
//	go run ./cmd/demo [-device webgpu:0] [-epochs 15] [-seed 1] [-data DIR] [-chart loss.svg] [-checkpoints DIR] [-profile trace.json]
//
// Without -data it trains on the UCI optical handwritten digits committed
// under testdata/digits (1,797 8×8 images, of which a seeded fifth is held
// out). With -data DIR it trains on MNIST or Fashion-MNIST IDX files in
// DIR (train-images-idx3-ubyte, train-labels-idx1-ubyte and, when present,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte as the held-out set;
// each may be gzip-compressed, ending in .gz). The network is the same for
// both, sized from the images.
//
// The model and every batch live on the chosen device, and every op runs
// there (tensor.Explicit, the default placement). WEBTENSOR_PLACEMENT=auto
// instead lets small work run on the CPU and large work on the GPU, each
// op placed whole (see the tensor package's Placement).
//
// Training runs through package nn/train. -chart PATH writes the training
// and held-out loss of each epoch as an SVG chart; -checkpoints DIR keeps
// the last and the best (by held-out accuracy) model and optimizer there.
// -profile FILE profiles the training on the device (package profile):
// it prints the per-kernel table and writes a Chrome trace to FILE.
//
// The exit status is 1 when the final held-out accuracy is below -want
// (95% by default), so that `make demo` fails loudly if training breaks.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/webtensor/webtensor/profile"
	"github.com/webtensor/webtensor/tensor"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	device      string  // "" means tensor.Default()
	data        string  // "" means the committed digits file
	digits      string  // path of the digits file
	epochs      int     //
	batchSize   int     //
	lr          float64 // Adam's learning rate
	seed        uint64  // initialization, split and batch order
	testFrac    float64 // held-out fraction when the data has no test set
	want        float64 // minimum final accuracy, 0 for none
	progress    bool    // draw the progress bar
	chart       string  // SVG chart of the losses, "" for none
	checkpoints string  // checkpoint directory, "" for none
	autocast    bool    // mixed precision: graph.Autocast and an amp.GradScaler
	profile     string  // Chrome trace of the training's kernels, "" for none
}

// defaultDigits is where the digits file is, relative to the repository
// root, which is where `make demo` and `go run ./cmd/demo` run.
const defaultDigits = "testdata/digits/digits.csv.gz"

// The default epochs: for the digits, enough to pass 95% held out on each
// of 30 seeds tried (the lowest was 96.7%); for MNIST, the few passes a
// small CNN usually needs.
const (
	digitsEpochs = 20
	idxEpochs    = 3
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.device, "device", "", "device to train on, e.g. cpu or webgpu:0 (default: tensor.Default(), see WEBTENSOR_DEVICE)")
	fs.StringVar(&c.data, "data", "", "directory of MNIST-format IDX files (default: the UCI digits in "+defaultDigits+")")
	fs.StringVar(&c.digits, "digits", defaultDigits, "the digits CSV file, used without -data")
	fs.IntVar(&c.epochs, "epochs", digitsEpochs, fmt.Sprintf("passes over the training set (default %d with -data)", idxEpochs))
	fs.IntVar(&c.batchSize, "batch", 32, "samples per training step")
	fs.Float64Var(&c.lr, "lr", 1e-2, "Adam's learning rate")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the initialization, the held-out split and the batch order")
	fs.Float64Var(&c.testFrac, "test", 0.2, "fraction held out when the data has no separate test set")
	fs.Float64Var(&c.want, "want", 0.95, "exit with status 1 when the final held-out accuracy is below this (0: never)")
	fs.StringVar(&c.chart, "chart", "", "write an SVG chart of the training and held-out loss per epoch to this file")
	fs.StringVar(&c.checkpoints, "checkpoints", "", "keep the last and best checkpoints in this directory")
	fs.BoolVar(&c.autocast, "autocast", false, "mixed precision: float16 convolutions and products where the device runs float16, with dynamic loss scaling")
	fs.StringVar(&c.profile, "profile", "", "profile the training on the device: write a Chrome trace (chrome://tracing, ui.perfetto.dev) to this file and print the per-kernel table")
	progress := fs.String("progress", "auto", "progress bar: auto (when stderr is a terminal), on or off")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	// MNIST has 42 times the digits' training images, at 12 times the
	// pixels: fewer passes suffice, and each takes the CPU backend about
	// half a minute on two cores.
	epochsSet := false
	fs.Visit(func(f *flag.Flag) { epochsSet = epochsSet || f.Name == "epochs" })
	if c.data != "" && !epochsSet {
		c.epochs = idxEpochs
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case c.epochs < 1:
		return c, fmt.Errorf("-epochs must be at least 1, got %d", c.epochs)
	case c.batchSize < 1:
		return c, fmt.Errorf("-batch must be at least 1, got %d", c.batchSize)
	case !(c.lr > 0):
		return c, fmt.Errorf("-lr must be positive, got %v", c.lr)
	case !(c.testFrac > 0 && c.testFrac < 1):
		return c, fmt.Errorf("-test must be in (0, 1), got %v", c.testFrac)
	case !(c.want >= 0 && c.want <= 1):
		return c, fmt.Errorf("-want must be in [0, 1], got %v", c.want)
	}
	switch *progress {
	case "auto":
		f, ok := stderr.(*os.File)
		c.progress = ok && term.IsTerminal(int(f.Fd()))
	case "on":
		c.progress = true
	case "off":
		c.progress = false
	default:
		return c, fmt.Errorf("-progress must be auto, on or off, got %q", *progress)
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dev, err := openDevice(c.device)
	if err != nil {
		return err
	}
	trainSet, testSet, source, err := load(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "data:   %s: %d training and %d held-out images of %d×%d\n",
		source, trainSet.Len(), testSet.Len(), trainSet.Shape[1], trainSet.Shape[2])
	fmt.Fprintf(stdout, "device: %s\n", dev)
	if p := tensor.CurrentPlacement(); p != tensor.Explicit {
		fmt.Fprintf(stdout, "placement: %v (%s)\n", p, tensor.EnvPlacement)
	}

	var profiler *profile.Profiler
	if c.profile != "" {
		if profiler, err = profile.Start(dev); err != nil {
			return err
		}
	}
	res, err := train(c, dev, trainSet, testSet, stdout, stderr)
	if profiler != nil {
		if perr := writeProfile(profiler, c.profile, stdout); err == nil {
			err = perr
		}
	}
	if err != nil {
		return err
	}
	epochs := "epochs"
	if c.epochs == 1 {
		epochs = "epoch"
	}
	fmt.Fprintf(stdout, "held-out accuracy %.2f%% (%d/%d) on %s after %d %s, %.1f s of training\n",
		100*res.accuracy, res.correct, testSet.Len(), dev.Name(), c.epochs, epochs, res.elapsed.Seconds())
	if c.chart != "" {
		if err := writeChart(c.chart, res); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chart:  %s\n", c.chart)
	}
	if res.accuracy < c.want {
		return fmt.Errorf("held-out accuracy %.2f%% is below the %.0f%% that -want asks for", 100*res.accuracy, 100*c.want)
	}
	return nil
}

// writeProfile stops the profile, writes its trace to path and its table
// to stdout.
func writeProfile(p *profile.Profiler, path string, stdout io.Writer) error {
	prof, err := p.Stop()
	if err != nil {
		return err
	}
	if err := prof.WriteTraceFile(path); err != nil {
		return err
	}
	if err := prof.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trace:  %s (open in chrome://tracing or ui.perfetto.dev)\n", path)
	return nil
}

// writeChart writes the run's losses to path as SVG.
func writeChart(path string, res result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.history.WriteSVG(f, 480, 320); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
