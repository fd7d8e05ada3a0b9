package hal

// The op table: every elementwise kernel is declared once, below, with
// what the rest of the module derives from it: its name, the dtypes it
// runs, whether it is differentiable and whether it fuses, and its doc
// line. Backends declare their capabilities from it, package tensor builds
// its op listing (tensor.Ops, the README's op table) and its unary
// functions, and cmd/opgen generates the methods of tensor.Tensor and the
// functions and methods of graph.Value from it; haltest tests every op it
// lists. Each entry is also a kernel of the kernel table (kerneltable.go),
// which declares the other kernels. docs/adding-an-op.md says what else an
// op needs.

// UnaryOp names an elementwise kernel of one input (and the constants in
// Args).
type UnaryOp uint8

// Unary kernels, in the order of unaryTable, whose entries define them
// (Info). Float dtypes run all of them; Int32 runs those whose entry says
// Int32Runs, and Clamp on Int32 truncates Args toward zero.
const (
	Neg UnaryOp = iota
	Abs
	Sign
	Reciprocal
	Sqrt
	Rsqrt
	Square
	Exp
	Log
	Log1p
	Sin
	Cos
	Tan
	Tanh
	Sigmoid
	ReLU
	LeakyReLU
	ELU
	GELU
	GELUTanh
	SiLU
	Softplus
	Clamp
	Erf
	Expm1
	numUnaryOps
)

// BinaryOp names an elementwise kernel of two inputs.
type BinaryOp uint8

// Binary kernels, in the order of binaryTable, whose entries define them
// (Info). Float dtypes run all of them; Int32 runs those whose entry says
// Int32Runs. Maximum and Minimum propagate NaN. Comparisons write an Int32
// mask. ReLUGrad is ReLU's backward pass fused (a comparison and a Where
// would each make a pass over memory).
const (
	Add BinaryOp = iota
	Sub
	Mul
	Div
	Pow
	Maximum
	Minimum
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	ReLUGrad
	numBinaryOps
)

// Int32Rule says what an elementwise op does with Int32 operands.
type Int32Rule uint8

const (
	// Int32Refused: the op is defined for float dtypes only.
	Int32Refused Int32Rule = iota
	// Int32Runs: the kernel runs on Int32 itself (wrapping as Go's int32
	// arithmetic does).
	Int32Runs
	// Int32Promotes: the kernel is float-only, and package tensor casts an
	// Int32 operand to Float32 first, as torch promotes sqrt, exp and true
	// division.
	Int32Promotes
)

// OpInfo is one entry of the op table.
type OpInfo struct {
	// Name is the op's Go name in packages tensor and graph, e.g. "Log1p".
	Name string
	// Key is its name in kernel keys (Kernel), e.g. "log1p".
	Key string
	// Params are the names of the float64 parameters that follow the
	// operand in tensor's function, in the order they fill Args.Alpha and
	// Args.Beta (unary ops only).
	Params []string
	// Int32 is what the op does with Int32 operands; float16 runs wherever
	// the device computes in float16 (shader-f16 on WebGPU).
	Int32 Int32Rule
	// Differentiable says whether graph has a gradient rule for the op.
	Differentiable bool
	// Optional puts the kernel in the optional fused tier (tiers.go):
	// package tensor composes it from required kernels where a device does
	// not declare it.
	Optional bool
	// Fusible says whether a backend may run the op inside a fused
	// elementwise kernel (a kernel whose result is a value per element,
	// with no neighbour, reduction or side effect).
	Fusible bool
	// Doc is what the op computes, e.g. "ln(1+x), accurate near 0", with
	// x the operand (a and b for binary ops).
	Doc string
	// Note is an optional sentence for the generated documentation of
	// tensor's function: the op's corner cases ("NaN stays NaN"). Ops with
	// Params have hand-written functions, which document themselves.
	Note string
	// GradNote is an optional sentence on the gradient for the generated
	// documentation of graph's function, where it departs from the textbook
	// derivative.
	GradNote string
}

// elementwise marks an op that is differentiable and fuses, as most are.
func elementwise(name, key, doc string, int32 Int32Rule) OpInfo {
	return OpInfo{Name: name, Key: key, Doc: doc, Int32: int32, Differentiable: true, Fusible: true}
}

// optional marks an op of the optional tier.
func (o OpInfo) optional() OpInfo {
	o.Optional = true
	return o
}

// with returns o with params, a note and a gradient note added.
func (o OpInfo) with(params []string, note, gradNote string) OpInfo {
	o.Params, o.Note, o.GradNote = params, note, gradNote
	return o
}

var unaryTable = [numUnaryOps]OpInfo{
	Neg:        elementwise("Neg", "neg", "−x", Int32Runs),
	Abs:        elementwise("Abs", "abs", "|x|", Int32Runs).with(nil, "", "Its gradient at 0 is 0, as PyTorch's."),
	Sign:       elementwise("Sign", "sign", "−1, 0 or 1", Int32Runs).with(nil, "NaN stays NaN.", "Its gradient is 0 everywhere, as PyTorch's."),
	Reciprocal: elementwise("Reciprocal", "reciprocal", "1/x", Int32Promotes),
	Sqrt:       elementwise("Sqrt", "sqrt", "√x", Int32Promotes),
	Rsqrt:      elementwise("Rsqrt", "rsqrt", "1/√x", Int32Promotes),
	Square:     elementwise("Square", "square", "x²", Int32Runs),
	Exp:        elementwise("Exp", "exp", "eˣ", Int32Promotes),
	Log:        elementwise("Log", "log", "ln x", Int32Promotes),
	Log1p:      elementwise("Log1p", "log1p", "ln(1+x)", Int32Promotes).with(nil, "It is accurate near 0.", ""),
	Sin:        elementwise("Sin", "sin", "sin x", Int32Promotes),
	Cos:        elementwise("Cos", "cos", "cos x", Int32Promotes),
	Tan:        elementwise("Tan", "tan", "tan x", Int32Promotes),
	Tanh:       elementwise("Tanh", "tanh", "tanh x", Int32Promotes),
	Sigmoid:    elementwise("Sigmoid", "sigmoid", "1/(1+e⁻ˣ)", Int32Promotes).optional(),
	ReLU:       elementwise("ReLU", "relu", "max(x, 0)", Int32Runs).with(nil, "NaN stays NaN.", "Its gradient at 0 is 0, as PyTorch's."),
	LeakyReLU: elementwise("LeakyReLU", "leaky_relu", "x ≥ 0 ? x : alpha·x", Int32Refused).
		with([]string{"alpha"}, "", "").optional(),
	ELU: elementwise("ELU", "elu", "x > 0 ? x : alpha·(eˣ−1)", Int32Refused).
		with([]string{"alpha"}, "", "").optional(),
	GELU:     elementwise("GELU", "gelu", "x·Φ(x) = x/2·(1+erf(x/√2))", Int32Refused).with(nil, "It is the exact (erf) form of torch's gelu.", "").optional(),
	GELUTanh: elementwise("GELUTanh", "gelu_tanh", "x/2·(1+tanh(√(2/π)·(x+0.044715x³)))", Int32Refused).with(nil, `It is torch's gelu(approximate="tanh").`, "").optional(),
	SiLU:     elementwise("SiLU", "silu", "x·sigmoid(x)", Int32Refused).with(nil, "It is also called swish.", "").optional(),
	Softplus: elementwise("Softplus", "softplus", "beta·x > threshold ? x : ln(1+e^(beta·x))/beta", Int32Refused).
		with([]string{"beta", "threshold"}, "", "").optional(),
	Clamp: elementwise("Clamp", "clamp", "min(max(x, lo), hi)", Int32Runs).
		with([]string{"lo", "hi"}, "", ""),
	Erf:   elementwise("Erf", "erf", "erf x = 2/√π·∫₀ˣ e^(−t²) dt", Int32Promotes),
	Expm1: elementwise("Expm1", "expm1", "eˣ−1", Int32Promotes).with(nil, "It is accurate near 0.", ""),
}

// comparison is a binary op that writes an Int32 mask: not
// differentiable.
func comparison(name, key, doc, note string) OpInfo {
	return OpInfo{Name: name, Key: key, Doc: doc, Note: note, Int32: Int32Runs, Fusible: true}
}

var binaryTable = [numBinaryOps]OpInfo{
	Add: elementwise("Add", "add", "a + b", Int32Runs),
	Sub: elementwise("Sub", "sub", "a − b", Int32Runs),
	Mul: elementwise("Mul", "mul", "a · b", Int32Runs),
	Div: elementwise("Div", "div", "a / b", Int32Promotes).with(nil, "Int32 operands give a Float32 true quotient, as torch.div.", ""),
	Pow: elementwise("Pow", "pow", "aᵇ", Int32Refused).with(nil, "It follows C's pow.",
		"As PyTorch, the gradient with respect to a is 0 where b = 0, and with respect to b is 0 where a = 0 and b ≥ 0 (instead of 0·log 0)."),
	Maximum: elementwise("Maximum", "maximum", "max(a, b)", Int32Runs).with(nil, "NaN propagates.",
		"Where a = b the gradient is split equally between them (g/2 each), as PyTorch's maximum."),
	Minimum: elementwise("Minimum", "minimum", "min(a, b)", Int32Runs).with(nil, "NaN propagates.",
		"Where a = b the gradient is split equally between them (g/2 each), as PyTorch's minimum."),
	Eq: comparison("Eq", "eq", "a = b", ""),
	Ne: comparison("Ne", "ne", "a ≠ b", "NaN is unequal to everything."),
	Lt: comparison("Lt", "lt", "a < b", ""),
	Le: comparison("Le", "le", "a ≤ b", ""),
	Gt: comparison("Gt", "gt", "a > b", ""),
	Ge: comparison("Ge", "ge", "a ≥ b", ""),
	ReLUGrad: elementwise("ReLUGrad", "relu_grad", "b ≤ 0 ? 0 : a", Int32Runs).with(nil,
		"It is ReLU's gradient a where ReLU's output (or input) b is above 0, as torch's threshold_backward(a, b, 0): 0 where b ≤ 0, a where b is NaN.",
		"Its gradient with respect to b is 0."),
}

// UnaryOps lists every unary kernel.
var UnaryOps = enumerate[UnaryOp](numUnaryOps)

// BinaryOps lists every binary kernel.
var BinaryOps = enumerate[BinaryOp](numBinaryOps)

// Info returns op's entry in the op table; an unknown op has a zero entry.
func (op UnaryOp) Info() OpInfo {
	if op < numUnaryOps {
		return unaryTable[op]
	}
	return OpInfo{}
}

// Info returns op's entry in the op table; an unknown op has a zero entry.
func (op BinaryOp) Info() OpInfo {
	if op < numBinaryOps {
		return binaryTable[op]
	}
	return OpInfo{}
}

// RunsInt32 reports whether the kernel runs on Int32.
func (op UnaryOp) RunsInt32() bool { return op.Info().Int32 == Int32Runs }

// RunsInt32 reports whether the kernel runs on Int32.
func (op BinaryOp) RunsInt32() bool { return op.Info().Int32 == Int32Runs }

func (op UnaryOp) String() string { return name(unaryNames, op, "UnaryOp") }

// Kernel is the op's key in Capabilities, e.g. "unary.exp".
func (op UnaryOp) Kernel() string { return kernelName(unaryKernels, op, "unary.") }

func (op BinaryOp) String() string { return name(binaryNames, op, "BinaryOp") }

// Kernel is the op's key in Capabilities, e.g. "binary.add".
func (op BinaryOp) Kernel() string { return kernelName(binaryKernels, op, "binary.") }

// IsComparison reports whether op writes an Int32 mask.
func (op BinaryOp) IsComparison() bool { return op >= Eq && op <= Ge }

var (
	unaryNames  = keys(unaryTable[:])
	binaryNames = keys(binaryTable[:])
)

func keys(table []OpInfo) []string {
	out := make([]string, len(table))
	for i, o := range table {
		out[i] = o.Key
	}
	return out
}
