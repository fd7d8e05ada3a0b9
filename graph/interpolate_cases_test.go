package graph

import "github.com/webtensor/webtensor/tensor"

// InterpolateBackward, the rule of Interpolate's gradient, as an op of its
// own: its gradient is Interpolate again (checked against finite
// differences, first and second order, on odd sizes and a view).
func init() {
	gradCases = append(gradCases,
		gradCase{name: "InterpolateBackward/bicubic", inputs: []input{{shape: []int{1, 2, 7, 4}}},
			f: func(in []*Value) *Value {
				o := tensor.InterpolateOptions{Size: []int{7, 4}, Mode: tensor.InterpolateBicubic}
				return interpolateBackward(in[0], interpolateAttrs{opts: o, shape: []int{1, 2, 3, 5}})
			}},
		gradCase{name: "InterpolateBackward/bilinear view", inputs: []input{{shape: []int{2, 1, 3, 9}}},
			f: func(in []*Value) *Value {
				o := tensor.InterpolateOptions{Size: []int{9, 3}, Mode: tensor.InterpolateBilinear, AlignCorners: true}
				return interpolateBackward(in[0].Transpose(2, 3), interpolateAttrs{opts: o, shape: []int{2, 1, 4, 2}})
			}},
	)
}
