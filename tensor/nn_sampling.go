package tensor

import (
	"github.com/webtensor/webtensor/hal"
)

// GridPadding says what GridSample reads outside the input, as
// grid_sample's padding_mode.
type GridPadding = hal.GridPadding

// Grid paddings.
const (
	GridZeros  = hal.GridZeros  // 0 outside the input
	GridBorder = hal.GridBorder // coordinates clamped to the border pixels
)

// AffineGrid returns the sampling grid [N, H, W, 2] of the affine maps
// theta [N, 2, 3] for an output of size [N, C, H, W], as
// torch.nn.functional.affine_grid: grid[n, h, w] = theta[n]·(x_w, y_h, 1),
// where x_w and y_h are the normalized coordinates of the output pixels'
// centres: evenly spaced from −1 to 1 when alignCorners (±1 are the corner
// pixels' centres), else scaled by (W−1)/W and (H−1)/H (±1 are the image's
// outer edges). A size of 1 along an axis puts its pixel at 0.
//
// It builds the base grid [H·W, 3] from Linspace and multiplies it by
// thetaᵀ in one batched MatMul.
func AffineGrid(theta *Tensor, size []int, alignCorners bool) *Tensor {
	const op = "AffineGrid"
	// [N, H·W, 3]·[N, 3, 2]: six multiply-adds per output pixel.
	var pixels int64
	if len(size) == 4 {
		pixels = int64(max(size[0], 0)) * int64(max(size[2], 0)) * int64(max(size[3], 0))
	}
	return routed(op, familyMatMul, 6*pixels, func() *Tensor { return affineGrid(op, theta, size, alignCorners) }, &theta)
}

// affineGrid is AffineGrid on theta's device.
func affineGrid(op string, theta *Tensor, size []int, alignCorners bool) *Tensor {
	nnCheckFloat(op, "theta", theta)
	if len(size) != 4 {
		misuse(op, "size %v must be [N, C, H, W]", size)
	}
	n, h, w := size[0], size[2], size[3]
	if theta.Rank() != 3 || theta.shape[0] != n || theta.shape[1] != 2 || theta.shape[2] != 3 {
		misuse(op, "theta %s must be [%d, 2, 3] for size %v", nnDescribe(theta), n, size)
	}
	if n < 0 || size[1] < 0 || h <= 0 || w <= 0 {
		misuse(op, "size %v must have positive H and W", size)
	}
	checkOp(op, theta.dev, theta.dtype)

	var tmp nnScope
	defer tmp.release()
	xs := tmp.add(nnGridCoordinates(op, theta, w, alignCorners)) // [W]
	ys := tmp.add(nnGridCoordinates(op, theta, h, alignCorners)) // [H]
	xPlane := tmp.add(tmp.add(xs.Unsqueeze(0)).Expand(h, w))
	yPlane := tmp.add(tmp.add(ys.Unsqueeze(1)).Expand(h, w))
	ones := tmp.add(FullLike(xPlane, 1))
	base := tmp.add(stack(op, 2, []*Tensor{xPlane, yPlane, ones})) // [H, W, 3]
	flat := tmp.add(base.Reshape(h*w, 3))
	thetaT := tmp.add(theta.Transpose(1, 2))                         // [N, 3, 2], a view
	grid := tmp.add(gemm(op, 1, flat, false, thetaT, false, 0, nil)) // [N, H·W, 2]
	return grid.Reshape(n, h, w, 2)
}

// nnGridCoordinates returns affine_grid's n normalized coordinates along
// one axis, in theta's dtype and on its device. A single pixel sits at 0,
// as PyTorch's linspace_from_neg_one.
func nnGridCoordinates(op string, theta *Tensor, n int, alignCorners bool) *Tensor {
	if n <= 1 {
		return Full(theta.dev, theta.DType(), 0, n)
	}
	if theta.DType() == Float64 {
		// Linspace is float32; build float64 coordinates exactly instead.
		steps := Arange(theta.dev, Float64, 0, float64(n), 1)
		defer steps.Release()
		scale := 2 / float64(n-1)
		if !alignCorners {
			scale = 2 / float64(n)
		}
		scaled := binaryScalar(op, hal.Mul, steps, scale)
		defer scaled.Release()
		if alignCorners {
			return binaryScalar(op, hal.Add, scaled, -1)
		}
		return binaryScalar(op, hal.Add, scaled, -float64(n-1)/float64(n))
	}
	var tmp nnScope
	defer tmp.release()
	coords := Linspace(theta.dev, -1, 1, n)
	if !alignCorners {
		// PyTorch's arithmetic: range·(n−1)/n, each step rounded.
		tmp.add(coords)
		scaled := tmp.add(binaryScalar(op, hal.Mul, coords, float64(n-1)))
		coords = binaryScalar(op, hal.Div, scaled, float64(n))
	}
	if coords.DType() != theta.DType() {
		tmp.add(coords)
		coords = coords.Cast(theta.DType())
	}
	return coords
}

// GridSample samples x [N, C, H, W] bilinearly at the points of grid
// [N, OH, OW, 2], as torch.nn.functional.grid_sample with mode="bilinear":
// grid[n, i, j] = (x, y) in [−1, 1] addresses the input (−1 and 1 being
// the centres of the corner pixels when alignCorners, else their outer
// edges), and padding says what is read outside. The result is
// [N, C, OH, OW]. The sampling runs in one device kernel.
func GridSample(x, grid *Tensor, padding GridPadding, alignCorners bool) *Tensor {
	const op = "GridSample"
	return routed(op, familyWindow, gridSampleSize(x, grid), func() *Tensor {
		return gridSample(op, x, grid, padding, alignCorners)
	}, &x, &grid)
}

// gridSample is GridSample on its operands' device.
func gridSample(op string, x, grid *Tensor, padding GridPadding, alignCorners bool) *Tensor {
	nnCheckFloat(op, "input", x)
	nnCheckFloat(op, "grid", grid)
	sameDevice(op, x, grid)
	switch {
	case x.Rank() != 4:
		misuse(op, "input %s must be 4-D [N, C, H, W]", nnDescribe(x))
	case grid.Rank() != 4 || grid.shape[3] != 2:
		misuse(op, "grid %s must be [N, OH, OW, 2]", nnDescribe(grid))
	case grid.shape[0] != x.shape[0]:
		misuse(op, "input %s and grid %s have different batch sizes", nnDescribe(x), nnDescribe(grid))
	case x.DType() != grid.DType():
		misuse(op, "input %s and grid %s have different dtypes", nnDescribe(x), nnDescribe(grid))
	case padding != GridZeros && padding != GridBorder:
		misuse(op, "unknown padding %v", padding)
	case x.shape[2] == 0 || x.shape[3] == 0:
		misuse(op, "input %s has an empty image", nnDescribe(x))
	}
	checkOp(op, x.dev, x.dtype)
	return nnGridSample(op, x, grid, padding, alignCorners)
}
