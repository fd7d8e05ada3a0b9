package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMaxAbsDiff(t *testing.T) {
	assert.Equal(t, 0.0, maxAbsDiff(nil, nil))
	assert.InDelta(t, 0.5, maxAbsDiff([]float32{1, 2, 3}, []float32{1, 2.5, 2.75}), 1e-9)
	assert.True(t, math.IsNaN(maxAbsDiff([]float32{float32(math.NaN())}, []float32{0})))
}

func TestMaxAbs(t *testing.T) {
	assert.Equal(t, 3.0, maxAbs([]float32{1, -3, 2}))
}

func TestRunSmallOnCPU(t *testing.T) {
	assert.NoError(t, run(17, "cpu"))
	assert.Error(t, run(0, "cpu"))
	assert.Error(t, run(4, "nope"))
}
