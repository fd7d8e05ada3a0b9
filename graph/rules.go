package graph

// rules is the one table of differentiation rules: each primitive
// operation this package records, what its rule reads, and the rule
// itself. The rules' bodies live next to their families (rules_*.go);
// composite operations (Mean, Var, Softmax's …) are built from these
// primitives and need no rule of their own. An operation absent from the
// table is not differentiable: its result needs no gradient.
var rules map[string]*rule

func init() {
	rules = map[string]*rule{
		// Elementwise (rules_elementwise.go); the kernels of hal's op table
		// are added from unaryRules, binaryRules and scalarRules below.
		"Where":      {saves: []int{0}, vjp: vjpWhere},
		"Cast":       {vjp: vjpCast},
		"Contiguous": {vjp: vjpContiguous},
		// "Cast to int32" is absent: not differentiable.

		// Reductions, linear algebra, views, joins and indexing (rules_shape.go).
		"Sum":         {vjp: vjpSum},
		"Prod":        {saves: []int{0}, vjp: vjpProd},
		"Max":         {saves: []int{0}, saveOutput: true, vjp: vjpExtremum},
		"Min":         {saves: []int{0}, saveOutput: true, vjp: vjpExtremum},
		"LogSumExp":   {saves: []int{0}, saveOutput: true, vjp: vjpLogSumExp},
		"MatMul":      {saves: []int{0, 1}, vjp: vjpGemm},
		"Gemm":        {saves: []int{0, 1}, vjp: vjpGemm},
		"Reshape":     {vjp: vjpReshape},
		"Expand":      {vjp: vjpExpand},
		"Slice":       {vjp: vjpSlice},
		"Permute":     {vjp: vjpPermute},
		"Concat":      {vjp: vjpConcat},
		"Pad":         {vjp: vjpPad},
		"Gather":      {saves: []int{1}, vjp: vjpGather},
		"IndexSelect": {saves: []int{1}, vjp: vjpIndexSelect},
		"ScatterAdd":  {saves: []int{1}, vjp: vjpScatterAdd},
		// Mean, Var, Std, MatVec, Outer, Flatten, Squeeze, Unsqueeze,
		// BroadcastTo, Split, Chunk, T, Transpose, Stack and reflect Pad are
		// composites of these; ArgMax, ArgMin and OneHot are absent: not
		// differentiable.

		// Neural-network operations (rules_nn.go).
		"Softmax":           {saveOutput: true, vjp: vjpSoftmax},
		"LogSoftmax":        {saveOutput: true, vjp: vjpLogSoftmax},
		"Conv2d":            {saves: []int{0, 1}, vjp: vjpConv2d},
		"ConvTranspose2d":   {saves: []int{0, 1}, vjp: vjpConvTranspose2d},
		"MaxPool2d":         {vjp: vjpMaxPool2d},
		"AvgPool2d":         {vjp: vjpAvgPool2d},
		"AdaptiveAvgPool2d": {vjp: vjpAvgPool2d},
		"BatchNorm":         {saves: []int{0, 1}, vjp: vjpBatchNorm},
		"LayerNorm":         {saves: []int{0, 1}, vjp: vjpLayerNorm},
		"RBFKernel":         {saves: []int{0, 1}, saveOutput: true, vjp: vjpRBFKernel},
		"AffineGrid":        {vjp: vjpAffineGrid},
		"GridSample":        {saves: []int{0, 1}, vjp: vjpGridSample},
		// Dropout is a composite (the mask is a constant factor).
	}
	// Interpolate and its gradient, each the other's adjoint
	// (ops_interpolate.go).
	rules["Interpolate"] = &rule{vjp: vjpInterpolate}
	rules["InterpolateBackward"] = &rule{vjp: vjpInterpolateBackward}
	for op, r := range unaryRules {
		rules[op.Info().Name] = r
	}
	for op, r := range binaryRules {
		rules[op.Info().Name] = r
	}
	for op, r := range scalarRules {
		rules[op.Info().Name+"Scalar"] = r
	}
	for op, r := range linalgRules { // rules_linalg.go
		rules[op] = r
	}
	for op, r := range sortRules { // Sort, TopK, KthValue and the scans (rules_sort.go)
		rules[op] = r
	}
}
