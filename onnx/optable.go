package onnx

import (
	"errors"
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/tensor"
)

// opDef is one supported operator: a host implementation for constant and
// shape arithmetic, a device one, or both; and checks of its attributes
// made at load time.
type opDef struct {
	host  func(n *node, in []*hostTensor) ([]*hostTensor, error)
	dev   devFunc
	check func(n *node) error
}

// Ops returns the names of the operators the importer runs, sorted.
func Ops() []string {
	var out []string
	for name := range opTable {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// outputsAtMost rejects nodes that ask for optional outputs the importer
// does not produce (BatchNormalization's running statistics, MaxPool's
// indices, Dropout's mask, LayerNormalization's mean).
func outputsAtMost(k int) func(n *node) error {
	return func(n *node) error {
		for i := k; i < len(n.outputs); i++ {
			if n.outputs[i] != "" {
				return fmt.Errorf("optional output %d (%q) is not supported", i, n.outputs[i])
			}
		}
		return nil
	}
}

var opTable map[string]opDef

func init() {
	float := func(f func(*tensor.Tensor) *tensor.Tensor) opDef { return opDef{dev: unaryOp(f)} }
	opTable = map[string]opDef{
		// Shape arithmetic: host, and device where the data may live there.
		"Shape":           {host: hostShape, dev: devShape},
		"Size":            {host: hostSize, dev: devSize},
		"Constant":        {host: hostConstant},
		"ConstantOfShape": {host: hostConstantOfShape, dev: devConstantOfShape},
		"Range":           {host: hostRange},
		"Identity":        {host: hostIdentity, dev: devIdentity},
		"Cast":            {host: hostCast, dev: devCast},
		"Gather":          {host: hostGather, dev: devGather},
		"Concat":          {host: hostConcat, dev: devConcat},
		"Unsqueeze":       {host: hostUnsqueeze, dev: devUnsqueeze(false)},
		"Squeeze":         {host: hostSqueeze, dev: devUnsqueeze(true)},
		"Reshape":         {host: hostReshape, dev: devReshape},
		"Flatten":         {host: hostFlatten, dev: devFlatten},
		"Slice":           {host: hostSlice, dev: devSlice},
		"Transpose":       {host: hostTranspose, dev: devTranspose},
		"Expand":          {host: hostExpand, dev: devExpand},
		"Add":             {host: hostAdd, dev: binaryOp(tensor.Add)},
		"Sub":             {host: hostSub, dev: binaryOp(tensor.Sub)},
		"Mul":             {host: hostMul, dev: binaryOp(tensor.Mul)},
		"Div":             {host: hostDiv, dev: binaryOp(tensor.Div)},
		"Pow":             {host: hostPow, dev: binaryOp(tensor.Pow)},
		"Equal":           {host: hostEqual, dev: binaryOp(tensor.Eq)},
		"Less":            {host: hostLess, dev: binaryOp(tensor.Lt)},
		"Greater":         {host: hostGreat, dev: binaryOp(tensor.Gt)},
		"Where":           {host: hostWhere, dev: devWhere},
		"Not":             {host: hostNot, dev: devNot},
		"Neg":             {host: hostNeg, dev: unaryOp(tensor.Neg)},
		"Abs":             {host: hostAbs, dev: unaryOp(tensor.Abs)},
		"Sqrt":            {host: hostSqrt, dev: unaryOp(tensor.Sqrt)},
		"Max":             {dev: devVariadic(tensor.Maximum)},
		"Min":             {dev: devVariadic(tensor.Minimum)},
		"Sum":             {dev: devVariadic(tensor.Add)},

		// Device operators.
		"Relu":               float(tensor.ReLU),
		"Sigmoid":            float(tensor.Sigmoid),
		"Tanh":               float(tensor.Tanh),
		"Erf":                float(tensor.Erf),
		"Exp":                float(tensor.Exp),
		"Log":                float(tensor.Log),
		"Reciprocal":         float(tensor.Reciprocal),
		"Softmax":            {dev: devSoftmax(false)},
		"LogSoftmax":         {dev: devSoftmax(true)},
		"Clip":               {dev: devClip},
		"MatMul":             {dev: devMatMul},
		"Gemm":               {dev: devGemm},
		"Conv":               {dev: devConv},
		"ConvTranspose":      {dev: devConvTranspose, check: checkConvTranspose},
		"MaxPool":            {dev: devPool(false), check: outputsAtMost(1)},
		"AveragePool":        {dev: devPool(true)},
		"GlobalAveragePool":  {dev: devGlobalAveragePool},
		"BatchNormalization": {dev: devBatchNorm, check: checkBatchNorm},
		"LayerNormalization": {dev: devLayerNorm, check: outputsAtMost(1)},
		"ReduceMean":         {dev: devReduce((*tensor.Tensor).Mean)},
		"ReduceSum":          {dev: devReduce((*tensor.Tensor).Sum)},
		"ReduceMax":          {dev: devReduce((*tensor.Tensor).Max)},
		"Dropout":            {host: hostIdentity, dev: devIdentity, check: checkDropout},
		"Pad":                {dev: devPad},
		"LeakyRelu":          {dev: devActivation(leakyRelu)},
		"Elu":                {dev: devActivation(elu)},
		"HardSigmoid":        {dev: devActivation(hardSigmoidOp)},
		"HardSwish":          {dev: devActivation(hardSwish)},
		"Softplus":           {dev: devActivation(softplus)},
		"ReduceMin":          {dev: devReduce((*tensor.Tensor).Min)},
		"ArgMax":             {dev: devArgMax, check: checkArgMax},
		"Tile":               {dev: devTile},
		"Split":              {dev: devSplit},
		"Resize":             {dev: devResize, check: checkResize},
		"TopK":               {dev: devTopK},
		"CumSum":             {dev: devCumSum, check: checkCumSum},
		"Einsum":             {dev: devEinsum},
		"Trilu":              {dev: devTrilu},
		"ArgMin":             {dev: devArgMin, check: checkArgMax},
	}
}

func checkBatchNorm(n *node) error {
	if n.attrInt("training_mode", 0) != 0 {
		return errors.New("training_mode=1 is not supported (inference only)")
	}
	return outputsAtMost(1)(n)
}

func checkDropout(n *node) error {
	if len(n.inputs) > 2 && n.inputs[2] != "" {
		return errors.New("Dropout with a training_mode input is not supported (inference only)")
	}
	return outputsAtMost(1)(n)
}

func (o opDef) checkNode(n *node) error {
	if o.check == nil {
		return nil
	}
	return o.check(n)
}
