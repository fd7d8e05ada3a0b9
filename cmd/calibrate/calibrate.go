package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"text/tabwriter"
	"time"

	"github.com/webtensor/webtensor/tensor"
)

// sweep is the sizes each family is timed at and how often.
type sweep struct {
	elements []int // elementwise, reduction, creation: element counts
	matmul   []int // square matrix sizes n (n³ multiply-adds)
	images   []int // window: H = W of a [1, 16, H, W] input, 2×2 max pool
	reps     int   // timings per point; the fastest counts
}

func sweepFor(quick bool) sweep {
	if quick {
		return sweep{elements: []int{1 << 8, 1 << 12}, matmul: []int{8, 32}, images: []int{8, 32}, reps: 2}
	}
	return sweep{
		elements: []int{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22},
		matmul:   []int{16, 32, 64, 128, 256, 512, 1024},
		images:   []int{16, 32, 64, 128, 256},
		reps:     5,
	}
}

// point is one timed size of a family.
type point struct {
	size     int64 // in the family's measure (tensor.Thresholds)
	cpu, gpu time.Duration
}

// family is a timed op: run makes host data of the given sweep parameter
// on dev, runs the op and reads the result back.
type family struct {
	name   string
	params []int
	size   func(p int) int64
	run    func(dev *tensor.Device, p int) error
}

func families(s sweep) []family {
	r := rand.New(rand.NewPCG(1, 2))
	data := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = r.Float32()
		}
		return out
	}
	read := func(ts ...*tensor.Tensor) error {
		defer func() {
			for _, t := range ts {
				t.Release()
			}
		}()
		_, err := ts[len(ts)-1].Float32s()
		return err
	}
	elems := func(p int) int64 { return int64(p) }
	return []family{
		{"elementwise", s.elements, elems, func(dev *tensor.Device, n int) error {
			a, b := tensor.FromFloat32(dev, data(n)), tensor.FromFloat32(dev, data(n))
			return read(a, b, tensor.Add(a, b))
		}},
		{"reduction", s.elements, elems, func(dev *tensor.Device, n int) error {
			a := tensor.FromFloat32(dev, data(n))
			return read(a, a.Sum(nil, false))
		}},
		{"matmul", s.matmul, func(n int) int64 { return int64(n) * int64(n) * int64(n) }, func(dev *tensor.Device, n int) error {
			a, b := tensor.FromFloat32(dev, data(n*n), n, n), tensor.FromFloat32(dev, data(n*n), n, n)
			return read(a, b, tensor.MatMul(a, b))
		}},
		{"window", s.images, func(h int) int64 { return int64(16*(h/2)*(h/2)) * 4 }, func(dev *tensor.Device, h int) error {
			x := tensor.FromFloat32(dev, data(16*h*h), 1, 16, h, h)
			v, i := tensor.MaxPool2d(x, tensor.PoolOptions{Kernel: [2]int{2, 2}})
			i.Release()
			return read(x, v)
		}},
		// Creation is data that one small op then consumes: the upload and
		// the read-back dominate, as for the first op on new host data.
		{"creation", s.elements, elems, func(dev *tensor.Device, n int) error {
			a := tensor.FromFloat32(dev, data(n))
			return read(a, a.MulScalar(2))
		}},
	}
}

// timeIt returns the fastest of reps runs, after one warm-up that
// compiles kernels and fills pools.
func timeIt(reps int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	best := time.Duration(1<<63 - 1)
	for range reps {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		best = min(best, time.Since(start))
	}
	return best, nil
}

// crossover is the smallest size from which the GPU wins at every larger
// size of the sweep, or tensor.Never.
func crossover(points []point) int64 {
	thr := tensor.Never
	for i := len(points) - 1; i >= 0; i-- {
		if points[i].gpu >= points[i].cpu {
			break
		}
		thr = points[i].size
	}
	return thr
}

// calibrate times every family on the CPU and on gpuName, prints a table
// to w and merges the adapter's thresholds into the file at path.
func calibrate(w io.Writer, path, gpuName string, s sweep) error {
	tensor.SetPlacement(tensor.Explicit) // time the devices we name
	cpu, err := tensor.Open("cpu")
	if err != nil {
		return err
	}
	gpu, err := tensor.Open(gpuName)
	if err != nil {
		return err
	}
	adapter := tensor.AdapterKey(gpu.Info())
	fmt.Fprintf(w, "calibrating %v against %v\n", gpu, cpu)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "family\tsize\tcpu\tgpu\tgpu/cpu\t")
	thr := map[string]int64{}
	for _, f := range families(s) {
		var points []point
		for _, p := range f.params {
			pt := point{size: f.size(p)}
			if pt.cpu, err = timeIt(s.reps, func() error { return f.run(cpu, p) }); err != nil {
				return fmt.Errorf("%s on %s: %w", f.name, cpu.Name(), err)
			}
			if pt.gpu, err = timeIt(s.reps, func() error { return f.run(gpu, p) }); err != nil {
				return fmt.Errorf("%s on %s: %w", f.name, gpu.Name(), err)
			}
			points = append(points, pt)
			fmt.Fprintf(tw, "%s\t%d\t%v\t%v\t%.2f\t\n", f.name, pt.size, pt.cpu.Round(time.Microsecond),
				pt.gpu.Round(time.Microsecond), float64(pt.gpu)/float64(pt.cpu))
		}
		thr[f.name] = crossover(points)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := tensor.Thresholds{Elementwise: thr["elementwise"], Reduction: thr["reduction"], MatMul: thr["matmul"],
		Window: thr["window"], Creation: thr["creation"]}

	file, err := tensor.ReadThresholdsFile(path)
	if errors.Is(err, fs.ErrNotExist) || err != nil && file.Adapters == nil {
		file = tensor.ThresholdsFile{Version: tensor.ThresholdsFileVersion}
	}
	if file.Adapters == nil {
		file.Adapters = map[string]tensor.Thresholds{}
	}
	if file.Notes == nil {
		file.Notes = map[string]string{}
	}
	file.Version = tensor.ThresholdsFileVersion
	file.Adapters[adapter] = t
	note := fmt.Sprintf("measured %s by cmd/calibrate (%s, %d reps); -1 means the GPU never won", time.Now().UTC().Format(time.RFC3339), gpu, s.reps)
	if t == tensor.NeverThresholds {
		note = fmt.Sprintf("the GPU never beat the CPU in any family (%s): placement keeps all work on the CPU; ", gpu.Info().Type) + note
	}
	file.Notes[adapter] = note
	if err := file.Write(path); err != nil {
		return err
	}
	fmt.Fprintf(w, "thresholds for %q: %+v\nwrote %s\n", adapter, t, path)
	return nil
}
