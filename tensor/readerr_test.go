package tensor

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The methods with an error result return their misuse as an *Error
// instead of panicking: Item of a tensor that is not one element, and
// every reader (and Err) of a released tensor.
func TestReadersReturnErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		x := FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
		var v float64
		var err error
		require.Nil(t, Catch(func() { v, err = x.Item() }), "Item must not panic")
		var te *Error
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "Item", te.Op)
		assert.ErrorIs(t, err, ErrNotScalar)
		assert.Equal(t, "tensor: Item: tensor [2 3] float32 on "+dev.Name()+" has 6 elements: "+ErrNotScalar.Error(), err.Error())
		assert.Zero(t, v)

		empty := Zeros(dev, 0)
		_, err = empty.Item()
		assert.ErrorIs(t, err, ErrNotScalar)
		empty.Release()

		one := x.Slice(1, 2, 3, 1).Slice(0, 1, 2, 1) // [[6]]
		got, err := one.Item()
		require.NoError(t, err)
		assert.Equal(t, 6.0, got)
		one.Release()

		x.Release()
		want := "tensor: %s: use of released tensor [2 3] on " + dev.Name()
		for name, read := range map[string]func() error{
			"Item":     func() error { _, err := x.Item(); return err },
			"Float32s": func() error { _, err := x.Float32s(); return err },
			"Float64s": func() error { _, err := x.Float64s(); return err },
			"Int32s":   func() error { _, err := x.Int32s(); return err },
			"Err":      func() error { return x.Err() },
		} {
			var err error
			require.Nil(t, Catch(func() { err = read() }), "%s must not panic", name)
			require.ErrorAs(t, err, &te, name)
			assert.EqualError(t, err, fmt.Sprintf(want, name))
		}
		var nilTensor *Tensor
		_, err = nilTensor.Item()
		assert.EqualError(t, err, "tensor: Item: nil tensor")
		assert.False(t, errors.Is(err, ErrNotScalar))
	})
}
