package tensor

import "github.com/webtensor/webtensor/hal"

// Table coverage of issue 19's shape ops: their runners for
// TestOpTableIsCovered / TestSupportsMatchesBehaviour and their zero-size
// cases for TestZeroSize.

func init() {
	opRunners["Einsum"] = func(in *opInputs) *Tensor { return Einsum("bij,bjk->bik", in.x(2, 3, 4), in.x(2, 4, 5)) }
	opRunners["Flip"] = func(in *opInputs) *Tensor { return in.x(3, 4).Flip(0, 1) }
	opRunners["Roll"] = func(in *opInputs) *Tensor { return in.x(3, 4).Roll([]int{1, -2}, 0, 1) }
	opRunners["Tril"] = func(in *opInputs) *Tensor { return in.x(2, 3, 4).Tril(0) }
	opRunners["Triu"] = func(in *opInputs) *Tensor { return in.x(2, 3, 4).Triu(1) }
	opRunners["MaskedFill"] = func(in *opInputs) *Tensor { return in.x(3, 4).MaskedFill(in.mask(4), 1) }
	opRunners["MaskedSelect"] = func(in *opInputs) *Tensor { return in.x(3, 4).MaskedSelect(in.mask(3, 1)) }
	opRunners["Interpolate"] = func(in *opInputs) *Tensor {
		return Interpolate(in.x(1, 2, 3, 5), InterpolateOptions{Size: []int{4, 7}, Mode: InterpolateBilinear})
	}
	opRunners["InterpolateBackward"] = func(in *opInputs) *Tensor {
		return InterpolateBackward(in.x(1, 2, 4, 7), []int{1, 2, 3, 5}, InterpolateOptions{Size: []int{4, 7}, Mode: InterpolateBicubic})
	}
	opRunners["ResampleAlong"] = func(in *opInputs) *Tensor {
		taps := hal.ResampleTaps{Offsets: []int32{0, 1, 3, 3, 4}, Index: []int32{2, 0, 1, 2}, Weight: []float64{1, 0.25, 0.75, -2}}
		return ResampleAlong(in.x(2, 3, 5), 1, taps)
	}
}

func shapeOpZeroCases() map[string][]zcase {
	one := func(f func(dev *Device) *Tensor) func(dev *Device) []*Tensor {
		return func(dev *Device) []*Tensor { return []*Tensor{f(dev)} }
	}
	x0 := func(dev *Device) *Tensor { return Zeros(dev, 0, 3) }
	return map[string][]zcase{
		"Einsum": {
			{run: one(func(d *Device) *Tensor { return Einsum("ij,jk->ik", x0(d), Ones(d, 3, 2)) }), shapes: zsh([]int{0, 2})},
			// Summing over an empty label gives zeros.
			{run: one(func(d *Device) *Tensor { return Einsum("ij,jk->ik", Zeros(d, 2, 0), Zeros(d, 0, 3)) }), shapes: zsh([]int{2, 3}), fill: zf(0)},
		},
		"Flip":         {{run: one(func(d *Device) *Tensor { return x0(d).Flip(0, 1) }), shapes: zsh([]int{0, 3})}},
		"Roll":         {{run: one(func(d *Device) *Tensor { return x0(d).Roll([]int{2}, 0) }), shapes: zsh([]int{0, 3})}},
		"Tril":         {{run: one(func(d *Device) *Tensor { return x0(d).Tril(0) }), shapes: zsh([]int{0, 3})}},
		"Triu":         {{run: one(func(d *Device) *Tensor { return Zeros(d, 2, 0, 4).Triu(0) }), shapes: zsh([]int{2, 0, 4})}},
		"MaskedFill":   {{run: one(func(d *Device) *Tensor { return x0(d).MaskedFill(FromInt32(d, []int32{1, 0, 1}, 3), 2) }), shapes: zsh([]int{0, 3})}},
		"MaskedSelect": {{run: one(func(d *Device) *Tensor { return x0(d).MaskedSelect(FromInt32(d, []int32{1, 0, 1}, 3)) }), shapes: zsh([]int{0})}},
		"Interpolate": {{run: one(func(d *Device) *Tensor {
			return Interpolate(Zeros(d, 0, 2, 3, 3), InterpolateOptions{Size: []int{5, 2}, Mode: InterpolateBicubic})
		}), shapes: zsh([]int{0, 2, 5, 2})}},
		"InterpolateBackward": {{run: one(func(d *Device) *Tensor {
			return InterpolateBackward(Zeros(d, 0, 2, 5, 2), []int{0, 2, 3, 3}, InterpolateOptions{Size: []int{5, 2}, Mode: InterpolateBilinear})
		}), shapes: zsh([]int{0, 2, 3, 3})}},
		"ResampleAlong": {{run: one(func(d *Device) *Tensor {
			return ResampleAlong(Zeros(d, 0, 3), 1, hal.ResampleTaps{Offsets: []int32{0, 1, 2}, Index: []int32{2, 0}, Weight: []float64{1, 1}})
		}), shapes: zsh([]int{0, 2})}},
	}
}
