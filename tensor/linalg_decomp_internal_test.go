package tensor

// The linalg ops in the package's op-table tests: a runner each for
// TestSupportsMatchesBehaviour (well-conditioned inputs built from the
// runner's random, transposed operands) and zero-size cases for
// TestZeroSize.

func init() {
	// spd is x·xᵀ + 8·I: symmetric positive-definite, well conditioned.
	spd := func(in *opInputs, n int) *Tensor {
		x := in.x(n, n)
		return in.keep(Add(in.keep(MatMul(x, in.keep(x.T()))), in.keep(Eye(in.dev, n, n).Cast(x.dtype).MulScalar(8))))
	}
	first := func(ts ...*Tensor) *Tensor {
		releaseAll(ts[1:]...)
		return ts[0]
	}
	opRunners["Solve"] = func(in *opInputs) *Tensor { return Solve(spd(in, 5), in.x(2, 5, 3)) }
	opRunners["Inv"] = func(in *opInputs) *Tensor { return Inv(spd(in, 4)) }
	opRunners["Cholesky"] = func(in *opInputs) *Tensor { return Cholesky(spd(in, 5), false) }
	opRunners["QR"] = func(in *opInputs) *Tensor { return first(QR(in.x(3, 5, 4), QRReduced)) }
	opRunners["SVD"] = func(in *opInputs) *Tensor { return first(SVD(in.x(5, 3), false)) }
	opRunners["SVDVals"] = func(in *opInputs) *Tensor { return SVDVals(in.x(2, 3, 6)) }
	opRunners["Eigh"] = func(in *opInputs) *Tensor { return first(Eigh(spd(in, 4), true)) }
	opRunners["EigvalsH"] = func(in *opInputs) *Tensor { return EigvalsH(spd(in, 4), false) }
}

// linalgZeroCases: an empty batch or 0×0 matrices give empty results of
// PyTorch's shapes.
func linalgZeroCases() map[string][]zcase {
	f64 := func(d *Device, shape ...int) *Tensor { return Zeros(d, shape...) } // float32: every device holds it
	all := func(f func(d *Device) []*Tensor) func(d *Device) []*Tensor { return f }
	return map[string][]zcase{
		"Solve": {
			{run: all(func(d *Device) []*Tensor { return []*Tensor{Solve(f64(d, 0, 0), f64(d, 0, 2))} }), shapes: zsh([]int{0, 2})},
			{run: all(func(d *Device) []*Tensor { return []*Tensor{Solve(f64(d, 0, 3, 3), f64(d, 0, 3))} }), shapes: zsh([]int{0, 3})},
		},
		"Inv":      {{run: all(func(d *Device) []*Tensor { return []*Tensor{Inv(f64(d, 0, 0))} }), shapes: zsh([]int{0, 0})}},
		"Cholesky": {{run: all(func(d *Device) []*Tensor { return []*Tensor{Cholesky(f64(d, 3, 0, 0), true)} }), shapes: zsh([]int{3, 0, 0})}},
		"QR": {
			{run: all(func(d *Device) []*Tensor { q, r := QR(f64(d, 0, 3), QRReduced); return []*Tensor{q, r} }), shapes: zsh([]int{0, 0}, []int{0, 3})},
			{run: all(func(d *Device) []*Tensor { q, r := QR(f64(d, 4, 0, 2), QRComplete); return []*Tensor{q, r} }), shapes: zsh([]int{4, 0, 0}, []int{4, 0, 2})},
		},
		"SVD": {{run: all(func(d *Device) []*Tensor { u, s, vh := SVD(f64(d, 2, 0, 3), false); return []*Tensor{u, s, vh} }),
			shapes: zsh([]int{2, 0, 0}, []int{2, 0}, []int{2, 0, 3})}},
		"SVDVals":  {{run: all(func(d *Device) []*Tensor { return []*Tensor{SVDVals(f64(d, 0, 4, 3))} }), shapes: zsh([]int{0, 3})}},
		"Eigh":     {{run: all(func(d *Device) []*Tensor { w, v := Eigh(f64(d, 0, 0), false); return []*Tensor{w, v} }), shapes: zsh([]int{0}, []int{0, 0})}},
		"EigvalsH": {{run: all(func(d *Device) []*Tensor { return []*Tensor{EigvalsH(f64(d, 5, 0, 0), false)} }), shapes: zsh([]int{5, 0})}},
	}
}
