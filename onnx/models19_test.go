package onnx_test

import (
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// ops19 (testdata/golden/gen_onnx.py's Issue19Ops) is torch.topk (largest
// and smallest, on a transposed view), cumsum (forward, and reversed by
// flips), einsum (batched Gram matrix and a product with a weight),
// triu/tril, flip and argmin as PyTorch 1.13 exports them, against PyTorch's
// output, on every device, with batch 3 and batch 1. It stays out of the
// Float16 list: TopK's indices of values that round to ties in half
// precision legitimately differ from float32's.
func TestExportedIssue19OpsMatchPyTorch(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		runExported(t, dev, filepath.Join("..", "testdata", "onnx"), "ops19")
	})
}
