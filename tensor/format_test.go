package tensor

// Printing against PyTorch: testdata/golden/nn/print.json holds tensors
// (random data, odd sizes, every print mode: whole floats, fixed point,
// scientific, non-finite, elided, 0-d, empty, 3-D and 4-D) and torch
// 1.13's repr of each, per device name, written by
// testdata/golden/gen_print.py. Each case is built on every device that
// holds its dtype and formatted with %v (and %.Nv for the cases with
// another precision); the text must be torch's.
//
//	go test ./tensor -run 'TestFormatGolden/cpu/elided_3d'

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

type printGoldenTensor struct {
	Name         string            `json:"name"`
	DType        string            `json:"dtype"`
	Shape        []int             `json:"shape"`
	Data         []string          `json:"data"`
	Precision    int               `json:"precision"`
	Threshold    int               `json:"threshold"`
	EdgeItems    int               `json:"edgeitems"`
	LineWidth    int               `json:"linewidth"`
	RequiresGrad bool              `json:"requires_grad"`
	Repr         map[string]string `json:"repr"`
}

func loadPrintGolden(t *testing.T) []printGoldenTensor {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, "nn", "print.json"))
	require.NoError(t, err)
	var file struct {
		Tensors []printGoldenTensor `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Tensors)
	return file.Tensors
}

// build makes the case's tensor on dev, or reports that dev cannot hold
// its dtype.
func (c printGoldenTensor) build(t *testing.T, dev *Device) (*Tensor, bool) {
	vals := make([]float64, len(c.Data))
	for i, s := range c.Data {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		vals[i] = v
	}
	var x *Tensor
	err := Catch(func() {
		switch c.DType {
		case "float32":
			x = FromFloat32(dev, toFloat32s(vals), c.Shape...)
		case "float64":
			x = FromFloat64(dev, vals, c.Shape...)
		case "int32":
			ints := make([]int32, len(vals))
			for i, v := range vals {
				ints[i] = int32(v)
			}
			x = FromInt32(dev, ints, c.Shape...)
		case "float16":
			// The data are float16 values: exact in float32 and back.
			f := FromFloat32(dev, toFloat32s(vals), c.Shape...)
			defer f.Release()
			x = f.Cast(Float16)
		default:
			t.Fatalf("unknown dtype %q", c.DType)
		}
	})
	if errors.Is(err, hal.ErrUnsupported) {
		return nil, false
	}
	require.NoError(t, err)
	return x, true
}

func toFloat32s(vals []float64) []float32 {
	out := make([]float32, len(vals))
	for i, v := range vals {
		out[i] = float32(v)
	}
	return out
}

func TestFormatGolden(t *testing.T) {
	cases := loadPrintGolden(t)
	forEachDevice(t, func(t *testing.T, dev *Device) {
		for _, c := range cases {
			if c.RequiresGrad {
				continue // package graph's test
			}
			t.Run(c.Name, func(t *testing.T) {
				want, ok := c.Repr[dev.Name()]
				require.True(t, ok, "no golden repr for %s", dev.Name())
				x, ok := c.build(t, dev)
				if !ok {
					t.Skipf("%s holds no %s", dev.Name(), c.DType)
				}
				defer x.Release()
				o := DefaultPrintOptions
				o.Precision, o.Threshold, o.EdgeItems, o.LineWidth = c.Precision, c.Threshold, c.EdgeItems, c.LineWidth
				assert.Equal(t, want, x.Repr(o), "Repr")
				if o.Threshold != DefaultPrintOptions.Threshold || o.EdgeItems != DefaultPrintOptions.EdgeItems || o.LineWidth != DefaultPrintOptions.LineWidth {
					return // no verb for these
				}
				verb := "%v"
				if c.Precision != DefaultPrintOptions.Precision {
					verb = fmt.Sprintf("%%.%dv", c.Precision)
				}
				assert.Equal(t, want, fmt.Sprintf(verb, x))
				if verb == "%v" {
					assert.Equal(t, want, fmt.Sprintf("%s", x), "%%s prints as %%v")
				}
			})
		}
	})
}

// TestFormatShapeAndMarkers covers what torch has no repr for: %+v's size,
// the markers of released and failed tensors, and other verbs.
func TestFormatShapeAndMarkers(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *Device) {
		x := FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
		plain := fmt.Sprintf("%v", x)
		withShape := fmt.Sprintf("%+v", x)
		require.True(t, strings.HasSuffix(withShape, "size=(2, 3))"), withShape)
		require.Equal(t, strings.TrimSuffix(plain, ")"), withShape[:len(plain)-1])
		require.Equal(t, "%!d("+x.String()+")", fmt.Sprintf("%d", x))

		// A view that is not a packed prefix prints its own elements.
		tr := x.T()
		assert.Equal(t, fmt.Sprintf("%v", FromFloat32(dev, []float32{1, 4, 2, 5, 3, 6}, 3, 2)), fmt.Sprintf("%v", tr))
		tr.Release()

		x.Release()
		assert.Equal(t, "tensor(<released>)", fmt.Sprintf("%v", x))
		var nilTensor *Tensor
		assert.Equal(t, "tensor(<nil>)", fmt.Sprintf("%v", nilTensor))

		failed := failedTensor(dev, Float32, []int{2}, &Error{Op: "Test", Msg: "injected"})
		s := fmt.Sprintf("%v", failed)
		assert.Contains(t, s, "tensor(<error: tensor: Test: injected>")
	})
}

// A tensor of a lost device prints the loss in place of its values, for a
// small one and for a summarized one (whose edges are cut out on the
// device first), and new tensors print their values again.
func TestFormatLostDevice(t *testing.T) {
	forEachPrivateWebGPU(t, func(t *testing.T, dev *Device) {
		small := FromFloat32(dev, []float32{1, 2}, 2)
		big := Zeros(dev, 40, 40)
		require.NoError(t, dev.ForceLoss("print test"))
		for _, x := range []*Tensor{small, big} {
			var s string
			require.Nil(t, Catch(func() { s = fmt.Sprintf("%v", x) }), "printing must not panic")
			assert.True(t, strings.HasPrefix(s, "tensor(<error: "), s)
			assert.Contains(t, s, hal.ErrDeviceLost.Error())
			x.Release()
		}
		fresh := FromFloat32(dev, []float32{1, 2}, 2)
		defer fresh.Release()
		assert.True(t, strings.HasPrefix(fmt.Sprintf("%v", fresh), "tensor([1., 2.]"), fmt.Sprintf("%v", fresh))
	})
}
