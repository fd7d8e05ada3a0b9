package cpu_test

import (
	"testing"

	"github.com/webtensor/webtensor/backend/cpu"
	"github.com/webtensor/webtensor/hal/haltest"
)

// BenchmarkConv2D compares the Conv2D kernel with Im2Col + MatMul on
// ResNet-like layers: go test ./backend/cpu -run '^$' -bench Conv2D.
func BenchmarkConv2D(b *testing.B) {
	haltest.BenchmarkConv2D(b, cpu.New(), haltest.ResNetLayers)
}
