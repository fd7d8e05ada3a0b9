package onnx

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// resizeSpecRef resizes x of shape to out along every axis in float64 by
// the formulas of ONNX's Resize (opsets 13–17), written out here
// independently of the importer: the coordinate transformation per axis,
// nearest's rounding, and linear's blend of the two neighbours of the
// source coordinate on the edge-padded axis (the reference
// implementation's padding, where the importer clamps the coordinate).
func resizeSpecRef(x []float64, shape, out []int, scales []float64, mode, coord, rounding string) []float64 {
	cur, curShape := x, append([]int(nil), shape...)
	for axis := range shape {
		in, o := curShape[axis], out[axis]
		outer, inner := 1, 1
		for k := range axis {
			outer *= curShape[k]
		}
		for k := axis + 1; k < len(curShape); k++ {
			inner *= curShape[k]
		}
		at := func(a, i, b int) float64 { return cur[(a*in+min(max(i, 0), in-1))*inner+b] }
		next := make([]float64, outer*o*inner)
		for a := range outer {
			for j := range o {
				var s float64
				switch coord {
				case "half_pixel":
					s = (float64(j)+0.5)/scales[axis] - 0.5
				case "pytorch_half_pixel":
					if o > 1 {
						s = (float64(j)+0.5)/scales[axis] - 0.5
					}
				case "align_corners":
					if o > 1 {
						s = float64(j) * float64(in-1) / float64(o-1)
					}
				case "asymmetric":
					s = float64(j) / scales[axis]
				}
				for b := range inner {
					v := 0.0
					if mode == "nearest" {
						var i float64
						frac := s - math.Floor(s)
						switch {
						case rounding == "floor":
							i = math.Floor(s)
						case rounding == "ceil":
							i = math.Ceil(s)
						case frac == 0.5 && rounding == "round_prefer_floor":
							i = math.Floor(s)
						case frac == 0.5:
							i = math.Ceil(s)
						default:
							i = math.Round(s)
						}
						v = at(a, int(i), b)
					} else {
						i := math.Floor(s)
						f := s - i
						if s < 0 || s > float64(in-1) { // edge padding: both neighbours are the edge
							v = at(a, int(i), b)
						} else {
							v = (1-f)*at(a, int(i), b) + f*at(a, int(i)+1, b)
						}
					}
					next[(a*o+j)*inner+b] = v
				}
			}
		}
		cur = next
		curShape[axis] = o
	}
	return cur
}

// Resize in every nearest and linear variant opsets 13–17 define, beyond
// what torch exports (asymmetric linear, pytorch_half_pixel, the four
// rounding modes, outputs of size 1, scales on the batch and channel
// axes), on 1-D, 2-D and 3-D spatial axes by scales and by sizes, against
// the float64 reference of the spec on every device.
func TestResizeSpecModes(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	type rcase struct {
		shape         []int
		mode, coord   string
		rounding      string
		scales        []float64 // nil: sizes
		sizes         []int
		wantOutShape  []int
		scalesForSpec []float64
	}
	var cases []rcase
	coords := []string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}
	roundings := []string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
	shapes := [][]int{{2, 3, 7}, {1, 2, 5, 4}, {1, 2, 3, 4, 5}}
	for si, shape := range shapes {
		for ci, coord := range coords {
			for _, mode := range []string{"nearest", "linear"} {
				rounding := roundings[(si+ci)%len(roundings)]
				// By scales: up by 2 (ties at .5 for asymmetric), a
				// fractional one, and a downsampling.
				scales := []float64{1, 1}
				for k := 2; k < len(shape); k++ {
					scales = append(scales, []float64{2, 1.5, 0.5}[(k+ci)%3])
				}
				out := make([]int, len(shape))
				for k, s := range scales {
					out[k] = int(math.Floor(float64(shape[k]) * s))
				}
				cases = append(cases, rcase{shape: shape, mode: mode, coord: coord, rounding: rounding, scales: scales, wantOutShape: out, scalesForSpec: scales})
				// By sizes: odd sizes up and down, and a size of 1.
				sizes := append([]int(nil), shape[:2]...)
				for k := 2; k < len(shape); k++ {
					sizes = append(sizes, []int{11, 1, 3}[(k+si)%3])
				}
				spec := make([]float64, len(shape))
				for k := range shape {
					spec[k] = float64(sizes[k]) / float64(shape[k])
				}
				cases = append(cases, rcase{shape: shape, mode: mode, coord: coord, rounding: roundings[(si+ci+1)%4], sizes: sizes, wantOutShape: sizes, scalesForSpec: spec})
			}
		}
	}
	// Scales on every axis, batch and channels included.
	cases = append(cases, rcase{shape: []int{2, 3, 4}, mode: "nearest", coord: "asymmetric", rounding: "round_prefer_ceil", scales: []float64{2, 0.5, 1.5}, wantOutShape: []int{4, 1, 6}, scalesForSpec: []float64{2, 0.5, 1.5}})
	cases = append(cases, rcase{shape: []int{2, 3, 4}, mode: "linear", coord: "half_pixel", scales: []float64{1.5, 2, 1}, wantOutShape: []int{3, 6, 4}, scalesForSpec: []float64{1.5, 2, 1}})
	for _, cs := range cases {
		name := fmt.Sprintf("%dd_%s_%s_%s_scales%v_sizes%v", len(cs.shape)-2, cs.mode, cs.coord, cs.rounding, cs.scales, cs.sizes)
		t.Run(name, func(t *testing.T) {
			x := randn(r, count(cs.shape))
			attrs := []*onnxpb.AttributeProto{attrS("mode", cs.mode), attrS("coordinate_transformation_mode", cs.coord)}
			if cs.rounding != "" {
				attrs = append(attrs, attrS("nearest_mode", cs.rounding))
			}
			var inits []*onnxpb.TensorProto
			in := []string{"x", "", "scales"}
			if cs.scales != nil {
				inits = append(inits, floatsInit("scales", cs.scales...))
			} else {
				sizes := make([]int64, len(cs.sizes))
				for k, v := range cs.sizes {
					sizes[k] = int64(v)
				}
				inits = append(inits, intInit("sizes", []int{len(sizes)}, sizes...))
				in = []string{"x", "", "", "sizes"}
			}
			dims := make([]int, len(cs.shape))
			for k := range dims {
				dims[k] = -1
			}
			g := graphSpec{
				inits:   inits,
				nodes:   []*onnxpb.NodeProto{nodeOf("Resize", in, []string{"y"}, attrs...)},
				inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, cs.shape...)},
				outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, dims...)},
			}
			want := resizeSpecRef(x, cs.shape, cs.wantOutShape, cs.scalesForSpec, cs.mode, cs.coord, cs.rounding)
			checkOp(t, g.load(t), map[string][]float64{"x": x}, map[string][]int{"x": cs.shape}, want, cs.wantOutShape)
		})
	}
}

// Resize variants outside opsets 13–17's nearest and linear fail at load
// with an UnsupportedError naming the node and the attribute.
func TestResizeUnsupportedAtLoad(t *testing.T) {
	for _, cs := range []struct {
		attrs []*onnxpb.AttributeProto
		want  string
	}{
		{[]*onnxpb.AttributeProto{attrS("mode", "linear"), attrS("coordinate_transformation_mode", "tf_crop_and_resize")}, `coordinate_transformation_mode "tf_crop_and_resize"`},
		{[]*onnxpb.AttributeProto{attrS("mode", "linear"), attrS("coordinate_transformation_mode", "tf_half_pixel_for_nn")}, `coordinate_transformation_mode "tf_half_pixel_for_nn"`},
		{[]*onnxpb.AttributeProto{attrS("mode", "nearest"), attrS("nearest_mode", "round_half_even")}, `nearest_mode "round_half_even"`},
		{[]*onnxpb.AttributeProto{attrS("mode", "area")}, `mode "area"`},
		{[]*onnxpb.AttributeProto{attrS("mode", "linear"), attrI("antialias", 1)}, "antialias"},
	} {
		g := graphSpec{
			inits:   []*onnxpb.TensorProto{floatsInit("scales", 1, 1, 2, 2)},
			nodes:   []*onnxpb.NodeProto{nodeOf("Resize", []string{"x", "", "scales"}, []string{"y"}, cs.attrs...)},
			inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 3, 4, 5)},
			outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, -1, 3, -1, -1)},
		}
		_, err := Load(g.bytes(t), Options{})
		var ue *UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), cs.want) || !strings.Contains(err.Error(), "Resize_y") {
			t.Errorf("got %v, want an UnsupportedError naming node Resize_y and %s", err, cs.want)
		}
	}
}
