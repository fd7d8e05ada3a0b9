package onnx_test

import (
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// resize13 and resize17 (testdata/golden/gen_onnx.py's ResizeModes) are
// every nearest and linear Resize torch 1.13 exports, at opsets 13 and 17:
// 1-D, 2-D and 3-D spatial axes, by integer and fractional scales and by
// sizes up and down, half-pixel and align_corners, against PyTorch's
// output, on every device, with batch 2 and batch 1.
func TestExportedResizeMatchesPyTorch(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, name := range []string{"resize13", "resize17"} {
			t.Run(name, func(t *testing.T) {
				runExported(t, dev, filepath.Join("..", "testdata", "onnx"), name)
			})
		}
	})
}
