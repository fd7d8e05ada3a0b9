// Package data holds labelled samples (class labels or float targets) in host memory and cuts them into
// batches on a device: a Dataset, a seeded batch order, a seeded train/test
// split, and readers for the IDX format of MNIST and Fashion-MNIST and for
// CSV files. Readers accept gzip-compressed input as well as raw input,
// telling them apart by gzip's magic number.
//
// Datasets stay on the host because they are usually larger than a batch
// and are read in a different order every epoch; Batch copies only the
// samples of one batch to the device.
package data

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/webtensor/webtensor/tensor"
)

// Dataset is a set of labelled samples: sample i is
// X[i*size : (i+1)*size], where size is the product of Shape, one
// sample's shape (for images, [channels, height, width]). Its label is
// either a class, Y[i], for classification, or a float target,
// Targets[i*t : (i+1)*t] with t the product of TargetShape, for
// regression; a dataset has one kind or the other, never both. A nil
// TargetShape means one number per sample.
type Dataset struct {
	X           []float32
	Y           []int32
	Targets     []float32
	TargetShape []int
	Shape       []int
}

// Len is the number of samples.
func (d *Dataset) Len() int {
	if d.Targets != nil && d.Y == nil {
		if t := d.targetSize(); t > 0 {
			return len(d.Targets) / t
		}
	}
	return len(d.Y)
}

// HasTargets reports whether the samples have float targets (regression)
// rather than class labels.
func (d *Dataset) HasTargets() bool { return d.Targets != nil }

// targetSize is the number of elements in one sample's target.
func (d *Dataset) targetSize() int {
	n := 1
	for _, s := range d.TargetShape {
		n *= s
	}
	return n
}

// sampleSize is the number of elements in one sample.
func (d *Dataset) sampleSize() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// check panics when X, Y and Shape disagree, so that a hand-built Dataset
// fails where it is first used rather than with an index out of range.
func (d *Dataset) check(op string) {
	for _, s := range d.Shape {
		if s < 0 {
			misuse(op, "negative dimension in sample shape %v", d.Shape)
		}
	}
	if d.Targets != nil {
		if d.Y != nil {
			misuse(op, "both class labels Y and float Targets are set; a dataset has one kind")
		}
		t := d.targetSize()
		if t < 1 || len(d.Targets)%t != 0 {
			misuse(op, "len(Targets) = %d is not a multiple of the target size %d of target shape %v", len(d.Targets), t, d.TargetShape)
		}
	}
	if size, n := d.sampleSize(), d.Len(); len(d.X) != n*size {
		misuse(op, "len(X) = %d, want %d samples·%d = %d for sample shape %v", len(d.X), n, size, n*size, d.Shape)
	}
}

// Batches returns the sample indices 0…n-1 cut into batches of batchSize,
// in order or, with shuffle, in an order that depends only on seed (pass
// a different seed, such as seed+epoch, for each epoch). The last batch is
// shorter when batchSize does not divide n, unless dropLast drops it.
//
// The order comes from a PCG generator and a Fisher–Yates shuffle written
// here, not from math/rand's Shuffle, so it is the same on every Go
// version.
func Batches(n, batchSize int, shuffle bool, seed uint64, dropLast bool) [][]int {
	if n < 0 {
		misuse("Batches", "negative sample count %d", n)
	}
	if batchSize < 1 {
		misuse("Batches", "batch size %d, want at least 1", batchSize)
	}
	order := identity(n)
	if shuffle {
		permute(order, seed)
	}
	var out [][]int
	for start := 0; start < n; start += batchSize {
		end := min(start+batchSize, n)
		if end-start < batchSize && dropLast {
			break
		}
		out = append(out, order[start:end:end])
	}
	return out
}

// Batch copies the samples idx to dev: x is a Float32 tensor of shape
// [len(idx), Shape...]; y is an Int32 tensor of shape [len(idx)] with the
// class labels or, for a dataset with Targets, a Float32 tensor of shape
// [len(idx), TargetShape...]. It panics with a *tensor.Error when an
// index is out of range.
func (d *Dataset) Batch(dev *tensor.Device, idx []int) (x, y *tensor.Tensor) {
	d.check("Batch")
	size := d.sampleSize()
	xs := make([]float32, len(idx)*size)
	for j, i := range idx {
		if i < 0 || i >= d.Len() {
			misuse("Batch", "index %d out of range for %d samples", i, d.Len())
		}
		copy(xs[j*size:(j+1)*size], d.X[i*size:(i+1)*size])
	}
	shape := append([]int{len(idx)}, d.Shape...)
	x = tensor.FromFloat32(dev, xs, shape...)
	if d.HasTargets() {
		t := d.targetSize()
		ts := make([]float32, len(idx)*t)
		for j, i := range idx {
			copy(ts[j*t:(j+1)*t], d.Targets[i*t:(i+1)*t])
		}
		return x, tensor.FromFloat32(dev, ts, append([]int{len(idx)}, d.TargetShape...)...)
	}
	ys := make([]int32, len(idx))
	for j, i := range idx {
		ys[j] = d.Y[i]
	}
	return x, tensor.FromInt32(dev, ys, len(idx))
}

// Split shuffles the samples with seed and puts round(testFraction·Len)
// of them in test and the rest in train. Both are copies: changing one
// does not change d.
func (d *Dataset) Split(testFraction float64, seed uint64) (train, test *Dataset) {
	d.check("Split")
	if !(testFraction >= 0 && testFraction <= 1) {
		misuse("Split", "test fraction %v outside [0, 1]", testFraction)
	}
	order := identity(d.Len())
	permute(order, seed)
	nTest := int(math.Round(testFraction * float64(d.Len())))
	return d.subset(order[nTest:]), d.subset(order[:nTest])
}

// subset copies the samples idx into a new Dataset.
func (d *Dataset) subset(idx []int) *Dataset {
	size := d.sampleSize()
	out := &Dataset{
		X:     make([]float32, 0, len(idx)*size),
		Shape: append([]int(nil), d.Shape...),
	}
	if d.HasTargets() {
		t := d.targetSize()
		out.Targets = make([]float32, 0, len(idx)*t)
		out.TargetShape = append([]int(nil), d.TargetShape...)
		for _, i := range idx {
			out.Targets = append(out.Targets, d.Targets[i*t:(i+1)*t]...)
		}
	} else {
		out.Y = make([]int32, 0, len(idx))
		for _, i := range idx {
			out.Y = append(out.Y, d.Y[i])
		}
	}
	for _, i := range idx {
		out.X = append(out.X, d.X[i*size:(i+1)*size]...)
	}
	return out
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// pcgStream is PCG's stream selector; any constant will do, but it must
// never change, or every seeded order changes with it.
const pcgStream = 0x9e3779b97f4a7c15

// permute shuffles s in place (Fisher–Yates) with a PCG generator seeded
// by seed. The bounded draw is Lemire's multiply-and-reject, which is
// unbiased.
func permute(s []int, seed uint64) {
	rng := rand.NewPCG(seed, pcgStream)
	for i := len(s) - 1; i > 0; i-- {
		j := int(bounded(rng, uint64(i)+1))
		s[i], s[j] = s[j], s[i]
	}
}

// bounded returns a uniform draw from [0, n).
func bounded(rng *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(rng.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(rng.Uint64(), n)
		}
	}
	return hi
}

// misuse panics with a *tensor.Error, as the tensor package does for
// programming errors, so that tensor.Catch recovers it.
func misuse(op, format string, args ...any) {
	panic(&tensor.Error{Op: "data." + op, Msg: fmt.Sprintf(format, args...)})
}
