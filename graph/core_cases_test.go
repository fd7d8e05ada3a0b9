package graph

func init() {
	gradCases = append(gradCases,
		gradCase{name: "Add/broadcast", inputs: []input{{shape: []int{3, 4}}, {shape: []int{4}}},
			f: func(in []*Value) *Value { return Add(in[0], in[1]) }},
		gradCase{name: "Mul/broadcast", inputs: []input{{shape: []int{2, 1, 3}}, {shape: []int{4, 1}}},
			f: func(in []*Value) *Value { return Mul(in[0], in[1]) }},
		gradCase{name: "Mul/self", inputs: []input{{shape: []int{7}}},
			f: func(in []*Value) *Value { return Mul(in[0], in[0]) }},
		gradCase{name: "Sum/dims", inputs: []input{{shape: []int{2, 3, 4}}},
			f: func(in []*Value) *Value { return Mul(in[0], in[0]).Sum([]int{0, -1}, false) }},
		gradCase{name: "Sum/all keepDim", inputs: []input{{shape: []int{5, 1}}},
			f: func(in []*Value) *Value { return Mul(in[0], in[0]).Sum(nil, true) }},
		gradCase{name: "Reshape+Expand", inputs: []input{{shape: []int{6}}, {shape: []int{2, 3}, constant: true}},
			f: func(in []*Value) *Value { return Mul(in[0].Reshape(2, 1, 3).Expand(2, 2, 3), in[1]) }},
	)
}
