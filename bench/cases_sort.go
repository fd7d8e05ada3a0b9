package main

import (
	"fmt"

	"github.com/webtensor/webtensor/bench/schema"
	"github.com/webtensor/webtensor/tensor"
)

// sortCases are the sorting and scan cases: a row-wise sort of a
// 4096×1024 matrix (values and Int32 indices, as torch.sort) and the
// cumulative sum of 16M elements in one row. GB/s counts the least
// traffic: the sort reads 4 bytes an element and writes 4 + 4, the cumsum
// reads and writes 4.
func sortCases(quick bool) []benchCase {
	rows, cols, n := 4096, 1024, 1<<24
	if quick {
		rows, cols, n = 64, 128, 1<<16
	}
	return []benchCase{sortCase(rows, cols), cumsumCase(n)}
}

func sortCase(rows, cols int) benchCase {
	return benchCase{
		name: fmt.Sprintf("sort/%dx%d", rows, cols), group: "sort", size: float64(rows * cols),
		unit: schema.GBs, work: 12 * float64(rows*cols),
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			a := tensor.NewGenerator(1).Randn(dev, rows, cols)
			return func() *tensor.Tensor {
				values, indices := a.Sort(-1, false, false)
				indices.Release()
				return values
			}, releaser(a)
		},
	}
}

// cumsumCase's result is compared with the CPU's to 1e-3 of its largest
// value (about 4·√n for standard normal inputs): float32 sums of
// different orders differ by a few ulp of the running Σ|x|.
func cumsumCase(n int) benchCase {
	return benchCase{
		name: "cumsum/" + count(n), group: "cumsum", size: float64(n), unit: schema.GBs, work: 8 * float64(n),
		tol: 1e-3,
		setup: func(dev *tensor.Device) (func() *tensor.Tensor, func()) {
			a := tensor.NewGenerator(1).Randn(dev, n)
			return func() *tensor.Tensor { return a.Cumsum(0) }, releaser(a)
		},
	}
}
