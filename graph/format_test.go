package graph

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/tensor"
)

// TestFormatValueGolden prints a Param as torch prints a leaf that
// requires a gradient (testdata/golden/nn/print.json, case
// "requires_grad", written by testdata/golden/gen_print.py), on every
// device.
func TestFormatValueGolden(t *testing.T) {
	raw, err := os.ReadFile("../testdata/golden/nn/print.json")
	require.NoError(t, err)
	var file struct {
		Tensors []struct {
			Name         string            `json:"name"`
			Shape        []int             `json:"shape"`
			Data         []string          `json:"data"`
			RequiresGrad bool              `json:"requires_grad"`
			Repr         map[string]string `json:"repr"`
		} `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	found := 0
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		for _, c := range file.Tensors {
			if !c.RequiresGrad {
				continue
			}
			found++
			data := make([]float32, len(c.Data))
			for i, s := range c.Data {
				v, err := strconv.ParseFloat(s, 64)
				require.NoError(t, err)
				data[i] = float32(v)
			}
			p := Param(tensor.FromFloat32(dev, data, c.Shape...))
			assert.Equal(t, c.Repr[dev.Name()], fmt.Sprintf("%v", p), c.Name)

			// A constant prints as its tensor; a computed value names the
			// op that made it.
			k := Constant(tensor.FromFloat32(dev, data, c.Shape...))
			assert.Equal(t, fmt.Sprintf("%v", k.Tensor()), fmt.Sprintf("%v", k))
			y := Add(p, k)
			s := fmt.Sprintf("%v", y)
			assert.True(t, strings.HasSuffix(s, "grad_fn=<AddBackward>)"), s)
			p.Release()
			k.Release()
			y.Release()
			assert.Equal(t, "tensor(<released>)", fmt.Sprintf("%v", y))
		}
	})
	require.NotZero(t, found)
}

// Value's readers return, not panic with, a released value's misuse, and
// Item returns tensor.ErrNotScalar for a value that is not one element.
func TestValueReadersReturnErrors(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		x := Param(tensor.Ones(dev, 2, 2))
		var err error
		require.Nil(t, tensor.Catch(func() { _, err = x.Item() }))
		require.ErrorIs(t, err, tensor.ErrNotScalar)
		x.Release()
		for name, read := range map[string]func() error{
			"Item":     func() error { _, err := x.Item(); return err },
			"Float32s": func() error { _, err := x.Float32s(); return err },
			"Float64s": func() error { _, err := x.Float64s(); return err },
			"Int32s":   func() error { _, err := x.Int32s(); return err },
		} {
			var err error
			require.Nil(t, tensor.Catch(func() { err = read() }), name)
			var te *tensor.Error
			require.ErrorAs(t, err, &te)
			assert.EqualError(t, err, "tensor: graph."+name+": use of a released value")
		}
	})
}

// MeanAll is recorded: its gradient is 1/n everywhere.
func TestMeanAllGrad(t *testing.T) {
	testdevice.ForEach(t, func(t *testing.T, dev *tensor.Device) {
		x := Param(tensor.Ones(dev, 3, 5))
		defer x.Release()
		sq := x.Mul(x)
		defer sq.Release()
		loss := sq.MeanAll()
		defer loss.Release()
		require.Empty(t, loss.Shape())
		require.NoError(t, loss.Backward())
		g, err := x.Grad().Float64s()
		require.NoError(t, err)
		for _, v := range g {
			assert.InDelta(t, 2.0/15, v, 1e-6) // d/dx mean(x²) = 2x/n at x = 1
		}
	})
}
