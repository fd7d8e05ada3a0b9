//go:build cgo

package wgpu

import (
	"testing"

	"github.com/webtensor/webtensor/hal/haltest"
)

func TestConformance(t *testing.T) {
	haltest.Run(t, openTestDevice(t))
}

func BenchmarkKernels(b *testing.B) {
	haltest.Benchmark(b, openTestDevice(b))
}
