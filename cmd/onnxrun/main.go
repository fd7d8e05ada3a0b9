// Command onnxrun loads an ONNX model, prints its inputs, outputs, operator
// counts and parameter count, runs it on a device with random or .npy
// inputs, reports the latency of the first run and of the steady state,
// and writes the outputs as .npy files.
//
// Usage:
//
//	go run ./cmd/onnxrun [flags] model.onnx [flags]
//
// For example:
//
//	go run ./cmd/onnxrun testdata/onnx/resnet18.onnx -device webgpu:0
//	go run ./cmd/onnxrun testdata/onnx/transformer.onnx -input input=testdata/onnx/transformer.input.npy -out /tmp/out
//
// Inputs not given with -input are random: floats from N(0, 1), integers
// uniform in [0, -intmax); symbolic dimensions ("batch") take -batch.
// Integer .npy inputs (token ids) are read as int64. The exit status is 2
// for bad arguments and 1 when the model cannot be loaded or run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/webtensor/webtensor/internal/npy"
	"github.com/webtensor/webtensor/onnx"
	"github.com/webtensor/webtensor/tensor"
)

type inputFlags map[string]string

func (f inputFlags) String() string { return fmt.Sprint(map[string]string(f)) }

func (f inputFlags) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=file.npy, got %q", s)
	}
	f[name] = path
	return nil
}

type config struct {
	model, device, outDir string
	w                     io.Writer // standard output
	inputs                inputFlags
	batch, runs, intMax   int
	float16               bool
	seed                  uint64
}

func main() { os.Exit(onnxrun(os.Args[1:], os.Stdout, os.Stderr)) }

// onnxrun runs the command with args, printing to stdout and stderr, and
// returns its exit status: 0, 1 when the model fails to load or run, 2 on
// bad arguments.
func onnxrun(args []string, stdout, stderr io.Writer) int {
	var c config
	c.inputs = inputFlags{}
	c.w = stdout
	fs := flag.NewFlagSet("onnxrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.device, "device", "cpu", `device to run on: "cpu", "webgpu:0", …`)
	fs.Var(c.inputs, "input", "name=file.npy: read an input from a .npy file (repeatable)")
	fs.IntVar(&c.batch, "batch", 1, "size of symbolic dimensions of random inputs")
	fs.IntVar(&c.runs, "runs", 10, "steady-state runs to time after the first")
	fs.IntVar(&c.intMax, "intmax", 10, "random integer inputs are in [0, intmax)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random inputs")
	fs.BoolVar(&c.float16, "f16", false, "compute in Float16 (the CPU, and WebGPU adapters with shader-f16)")
	fs.StringVar(&c.outDir, "out", "", "folder to write the outputs to as <name>.npy")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: onnxrun [flags] model.onnx [flags]\n\n")
		fs.PrintDefaults()
	}
	// Flags may come before or after the model path.
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		if c.model != "" {
			fmt.Fprintf(stderr, "onnxrun: more than one model: %q and %q\n", c.model, fs.Arg(0))
			return 2
		}
		c.model, args = fs.Arg(0), fs.Args()[1:]
	}
	if c.model == "" {
		fs.Usage()
		return 2
	}
	if c.batch < 1 || c.runs < 0 || c.intMax < 1 {
		fmt.Fprintf(stderr, "onnxrun: -batch (%d) and -intmax (%d) must be at least 1, -runs (%d) at least 0\n", c.batch, c.intMax, c.runs)
		return 2
	}
	if err := run(c); err != nil {
		fmt.Fprintln(stderr, "onnxrun:", err)
		return 1
	}
	return 0
}

func run(c config) error {
	m, err := onnx.LoadFile(c.model)
	if err != nil {
		return err
	}
	defer m.Close()
	describe(c.w, m, c.model)

	dev, err := tensor.Open(c.device)
	if err != nil {
		return err
	}
	inputs, err := makeInputs(m, dev, c)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range inputs {
			t.Release()
		}
	}()
	fmt.Fprintf(c.w, "\ndevice: %v\n", dev)
	for _, in := range m.Inputs {
		fmt.Fprintf(c.w, "  input %s: %v %v\n", in.Name, inputs[in.Name].DType(), inputs[in.Name].Shape())
	}

	opts := onnx.RunOptions{DType: tensor.Float32}
	if c.float16 {
		opts.DType = tensor.Float16
	}
	start := time.Now()
	outs, err := m.RunWith(inputs, opts)
	if err == nil {
		err = dev.Sync()
	}
	if err != nil {
		return err
	}
	first := time.Since(start)
	times := make([]time.Duration, 0, c.runs)
	for range c.runs {
		start := time.Now()
		o, err := m.RunWith(inputs, opts)
		if err == nil {
			err = dev.Sync()
		}
		if err != nil {
			return err
		}
		times = append(times, time.Since(start))
		for _, t := range o {
			t.Release()
		}
	}
	fmt.Fprintf(c.w, "\nlatency: first run %v", first.Round(time.Microsecond))
	if len(times) > 0 {
		slices.Sort(times)
		fmt.Fprintf(c.w, ", steady state median %v (min %v, %d runs)", times[len(times)/2].Round(time.Microsecond), times[0].Round(time.Microsecond), len(times))
	}
	fmt.Fprintln(c.w)
	return writeOutputs(c.w, m, outs, c.outDir)
}

func describe(w io.Writer, m *onnx.Model, path string) {
	fmt.Fprintf(w, "model: %s (%s, opset %d)\n", path, m.Producer, m.Opset)
	for _, in := range m.Inputs {
		fmt.Fprintf(w, "  input  %v\n", in)
	}
	for _, out := range m.Outputs {
		fmt.Fprintf(w, "  output %v\n", out)
	}
	counts := m.OpCounts()
	ops := make([]string, 0, len(counts))
	total := 0
	for op, n := range counts {
		ops = append(ops, op)
		total += n
	}
	slices.Sort(ops)
	fmt.Fprintf(w, "operators: %d nodes (%d run per call after constant folding)\n", total, m.PlanLen())
	for _, op := range ops {
		fmt.Fprintf(w, "  %-20s %d\n", op, counts[op])
	}
	fmt.Fprintf(w, "parameters: %d\n", m.ParameterCount())
}

func makeInputs(m *onnx.Model, dev *tensor.Device, c config) (map[string]*tensor.Tensor, error) {
	out := map[string]*tensor.Tensor{}
	for name := range c.inputs {
		if !slices.ContainsFunc(m.Inputs, func(v onnx.ValueInfo) bool { return v.Name == name }) {
			return nil, fmt.Errorf("-input %s: the model has no input %q", name, name)
		}
	}
	r := rand.New(rand.NewPCG(c.seed, 0))
	for _, in := range m.Inputs {
		if path, ok := c.inputs[in.Name]; ok {
			t, err := readInput(dev, path)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", in.Name, err)
			}
			out[in.Name] = t
			continue
		}
		err := tensor.Catch(func() { out[in.Name] = in.RandomInput(dev, c.batch, r, c.intMax) })
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in.Name, err)
		}
	}
	return out, nil
}

func readInput(dev *tensor.Device, path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := npy.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if a.Float != nil {
		v := make([]float32, len(a.Float))
		for k, x := range a.Float {
			v[k] = float32(x)
		}
		var t *tensor.Tensor
		err := tensor.Catch(func() { t = tensor.FromFloat32(dev, v, a.Shape...) })
		return t, err
	}
	// Integers go up as Int64: the CPU keeps them and Run narrows them,
	// a WebGPU device narrows them on upload; either names a value out of
	// int32's range.
	var t *tensor.Tensor
	err = tensor.Catch(func() { t = tensor.FromInt64(dev, a.Int, a.Shape...) })
	return t, err
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func writeOutputs(w io.Writer, m *onnx.Model, outs map[string]*tensor.Tensor, dir string) error {
	defer func() {
		for _, t := range outs {
			t.Release()
		}
	}()
	for _, o := range m.Outputs {
		t := outs[o.Name]
		fmt.Fprintf(w, "output %s: %v %v\n", o.Name, t.DType(), t.Shape())
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, unsafeChars.ReplaceAllString(o.Name, "_")+".npy")
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if t.DType() == tensor.Float16 {
			t32 := t.Cast(tensor.Float32)
			defer t32.Release()
			t = t32
		}
		if t.DType() == tensor.Int32 {
			var v []int32
			if v, err = t.Int32s(); err == nil {
				err = npy.WriteInt32(f, v, t.Shape())
			}
		} else {
			var v []float32
			if v, err = t.Float32s(); err == nil {
				err = npy.WriteFloat32(f, v, t.Shape())
			}
		}
		if err = errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(w, "  wrote %s\n", path)
	}
	return nil
}
