package tensor

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// TestIndexErrorSameOnEveryDevice runs the same out-of-range index through
// IndexSelect, Gather and ScatterAdd on the CPU and every WebGPU adapter:
// each must fail with a *hal.IndexError whose text is the CPU's, word for
// word (one wording, declared in hal), inside a *tensor.Error naming the op
// or read that reported it.
func TestIndexErrorSameOnEveryDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 7))
	const rows, cols = 7, 5
	data := randomFloat32s(rng, rows*cols)
	bad := int32(rows + 3 + rng.IntN(50))
	selIdx := []int32{2, bad, 0}       // one bad index
	gatherIdx := make([]int32, 3*cols) // [3, cols] along axis 0
	for i := range gatherIdx {
		gatherIdx[i] = int32(rng.IntN(rows))
	}
	gatherIdx[cols+2] = bad
	src := randomFloat32s(rng, 3*cols)

	cases := map[string]func(dev *Device) *Tensor{
		"IndexSelect": func(dev *Device) *Tensor {
			x, i := FromFloat32(dev, data, rows, cols), FromInt32(dev, selIdx, 3)
			defer releaseAll(x, i)
			return x.IndexSelect(0, i)
		},
		"Gather": func(dev *Device) *Tensor {
			x, i := FromFloat32(dev, data, rows, cols), FromInt32(dev, gatherIdx, 3, cols)
			defer releaseAll(x, i)
			return x.Gather(0, i)
		},
		"ScatterAdd": func(dev *Device) *Tensor {
			x, i, s := FromFloat32(dev, data, rows, cols), FromInt32(dev, gatherIdx, 3, cols), FromFloat32(dev, src, 3, cols)
			defer releaseAll(x, i, s)
			return x.ScatterAdd(0, i, s)
		},
	}
	texts := map[string]string{} // op → the CPU's hal.IndexError text
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, op := range []string{"IndexSelect", "Gather", "ScatterAdd"} {
			y := cases[op](dev)
			_, err := y.Float32s()
			y.Release()
			require.Error(t, err, op)
			var te *Error
			require.ErrorAs(t, err, &te, op)
			require.True(t, errors.Is(err, hal.ErrIndexOutOfRange), op)
			var ie *hal.IndexError
			require.ErrorAs(t, err, &ie, "%s: %v", op, err)
			assert.Equal(t, int(bad), ie.Index, op)
			assert.Equal(t, 0, ie.Axis, op)
			assert.Equal(t, rows, ie.Size, op)
			if dev.Name() == "cpu" {
				texts[op] = ie.Error()
				continue
			}
			require.NotEmpty(t, texts[op], "the cpu subtest runs first")
			assert.Equal(t, texts[op], ie.Error(), op)
			assert.NoError(t, dev.Sync(), "reported once")
		}
	})
}
