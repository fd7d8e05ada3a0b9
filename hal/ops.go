package hal

import "fmt"

// Args are the constants of the unary kernels that take any: Alpha and
// Beta are the op table's Params, in order (LeakyReLU's alpha, Softplus's
// beta and threshold, Clamp's lo and hi).
type Args struct {
	Alpha, Beta float64
}

// ReduceOp names a reduction.
type ReduceOp uint8

// Reductions. Max and Min propagate NaN. LogSumExp is ln Σ eˣ computed
// stably (max-subtracted); its result for all −Inf inputs is −Inf.
const (
	Sum ReduceOp = iota
	Prod
	Max
	Min
	ArgMax
	ArgMin
	LogSumExp
	numReduceOps
)

// ReduceOps lists every reduction.
var ReduceOps = enumerate[ReduceOp](numReduceOps)

func (op ReduceOp) String() string { return name(reduceNames, op, "ReduceOp") }

// Kernel is the op's key in Capabilities, e.g. "reduce.sum".
func (op ReduceOp) Kernel() string { return kernelName(reduceKernels, op, "reduce.") }

// PoolOp names a 2-D pooling.
type PoolOp uint8

// Poolings.
const (
	PoolMax PoolOp = iota
	PoolAvg
	numPoolOps
)

// PoolOps lists every pooling.
var PoolOps = enumerate[PoolOp](numPoolOps)

func (op PoolOp) String() string { return name(poolNames, op, "PoolOp") }

// Kernel is the op's key in Capabilities, e.g. "pool2d.max".
func (op PoolOp) Kernel() string { return kernelName(poolKernels, op, "pool2d.") }

// Optimizer names a fused parameter update: Step reads a gradient and
// updates a parameter and its state in one kernel, as torch.optim's
// single-tensor implementations (PyTorch 1.13) do.
type Optimizer uint8

// Optimizers.
const (
	// SGD: g ← grad·scale + wd·p; with momentum, buf ← g on the first
	// step, else momentum·buf + (1 − dampening)·g, and g ← g +
	// momentum·buf (Nesterov) or buf; then p ← p − lr·g. State: [buf]
	// with momentum, else none.
	SGD Optimizer = iota
	// Adam (AdamW when Decoupled): g ← grad·scale (+ wd·p unless
	// Decoupled; Decoupled multiplies p by 1 − lr·wd first); m ← β₁m +
	// (1 − β₁)g; v ← β₂v + (1 − β₂)g²; p ← p − (lr/bc₁)·m/(√v/√bc₂ + eps).
	// State: [m, v].
	Adam
	// RMSProp: g ← grad·scale + wd·p; v ← αv + (1 − α)g²; with Centered,
	// a ← αa + (1 − α)g and d ← √(v − a²) + eps, else d ← √v + eps; with
	// momentum, buf ← momentum·buf + g/d and p ← p − lr·buf, else p ← p −
	// lr·g/d. State: [v], then buf with momentum, then a when Centered.
	RMSProp
	// Adagrad: g ← grad·scale + wd·p; sum ← sum + g²; p ← p −
	// lr·g/(√sum + eps), where the caller folds lr_decay into LR. State:
	// [sum].
	Adagrad
	numOptimizers
)

// Optimizers lists every fused update.
var Optimizers = enumerate[Optimizer](numOptimizers)

func (o Optimizer) String() string { return name(optimizerNames, o, "Optimizer") }

// Kernel is the update's key in Capabilities, e.g. "step.adam".
func (o Optimizer) Kernel() string { return kernelName(optimizerKernels, o, "step.") }

// States is how many state views Step takes for o under a, in the order
// o's comment lists them; −1 for an unknown o.
func (o Optimizer) States(a StepArgs) int {
	switch o {
	case SGD:
		if a.Momentum != 0 {
			return 1
		}
		return 0
	case Adam:
		return 2
	case Adagrad:
		return 1
	case RMSProp:
		n := 1
		if a.Momentum != 0 {
			n++
		}
		if a.Centered {
			n++
		}
		return n
	}
	return -1
}

// StepArgs are an update's hyperparameters for one step. The caller
// computes what depends on the step number (Adam's bias corrections,
// Adagrad's decayed rate), so the kernel needs no counter.
type StepArgs struct {
	LR, WeightDecay float64
	// SGD and RMSProp.
	Momentum, Dampening float64
	Nesterov            bool
	FirstStep           bool // SGD: the momentum buffer starts as g
	// Adam.
	Beta1, Beta2 float64
	// BiasCorrection1 and BiasCorrection2 are 1 − β₁ᵗ and 1 − β₂ᵗ at step t.
	BiasCorrection1, BiasCorrection2 float64
	Decoupled                        bool // AdamW's weight decay
	// RMSProp.
	Alpha    float64
	Centered bool
	// Adam, RMSProp and Adagrad.
	Eps float64
}

// Distribution names what Random draws. Each element i takes the Philox
// block (w₀, w₁, w₂, w₃) = Philox4x32-10(counter, key) with counter words
// (low 32 bits of offset+i, high 32 bits of offset+i, 0, 0) and key words
// (low 32 bits of seed, high 32 bits of seed), so every backend draws the
// same stream. Uniform and Bernoulli are bit-identical everywhere (p·2²⁴
// rounds half to even); Normal may differ by the rounding of the backend's
// ln, sqrt and cos. Values are computed in float32 and then rounded to
// dst's dtype, so a Float16 uniform may round up to 1.
type Distribution uint8

// Distributions.
const (
	Uniform   Distribution = iota // (w₀>>8)·2⁻²⁴, in [0, 1)
	Normal                        // √(−2 ln u₁)·cos(2π u₂), u₁ = ((w₀>>8)+1)·2⁻²⁴, u₂ = (w₁>>8)·2⁻²⁴
	Bernoulli                     // 1 if (w₀>>8) < round(p·2²⁴), else 0
	numDistributions
)

// Distributions lists every distribution.
var Distributions = enumerate[Distribution](numDistributions)

func (d Distribution) String() string { return name(distributionNames, d, "Distribution") }

// Kernel is the distribution's key in Capabilities, e.g. "random.normal".
func (d Distribution) Kernel() string { return kernelName(distributionKernels, d, "random.") }

// GridPadding says what GridSample reads outside the input.
type GridPadding uint8

// Grid paddings, as grid_sample's padding_mode.
const (
	GridZeros  GridPadding = iota // 0 outside
	GridBorder                    // coordinates clamped to the border
)

func (p GridPadding) String() string { return name([]string{"zeros", "border"}, p, "GridPadding") }

// Window is the geometry of a 2-D convolution or pooling window.
type Window struct {
	KH, KW               int // kernel size
	StrideH, StrideW     int // ≥ 1
	PadH, PadW           int // implicit zero padding on each side
	DilationH, DilationW int // ≥ 1
	OutH, OutW           int // the convolution's (or pooling's) output size
}

// OutputSize is the size of a convolution or pooling output along one axis
// of size in, floor (or ceil) division as PyTorch; with ceil, a window
// must start inside the input or its left padding.
func OutputSize(in, kernel, stride, pad, dilation int, ceil bool) int {
	span := in + 2*pad - dilation*(kernel-1) - 1
	if span < 0 {
		return 0
	}
	if !ceil {
		return span/stride + 1
	}
	out := (span+stride-1)/stride + 1
	if (out-1)*stride >= in+pad {
		out--
	}
	return out
}

// Capabilities maps each kernel a device runs, by its key (an op's Kernel
// or one of the Kernel constants), to the dtypes it runs it for. The dtype
// of a kernel is its input's (the source of Copy, the values of Where and
// Gather, dst of Fill and Random); Copy's set lists the dtypes it converts
// between, all pairs.
type Capabilities map[string]DTypeSet

// Supports reports whether kernel runs for dtype t.
func (c Capabilities) Supports(kernel string, t DType) bool { return c[kernel].Has(t) }

func enumerate[T ~uint8](n T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(i)
	}
	return out
}

func name[T ~uint8](names []string, v T, kind string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, int(v))
}

// Kernel keys, built once: backends look them up on every call, and
// concatenating them each time showed up as a tenth of a tiny op's cost.
var (
	unaryKernels        = prefixed("unary.", unaryNames[:])
	binaryKernels       = prefixed("binary.", binaryNames[:])
	reduceKernels       = keysOf(reduceTable[:])
	poolKernels         = keysOf(poolTable[:])
	optimizerKernels    = keysOf(optimizerTable[:])
	distributionKernels = keysOf(distributionTable[:])
	scanKernels         = keysOf(scanTable[:])
)

// Short names, for String.
var (
	reduceNames       = shortNames(reduceTable[:])
	poolNames         = shortNames(poolTable[:])
	optimizerNames    = shortNames(optimizerTable[:])
	distributionNames = shortNames(distributionTable[:])
	scanNames         = shortNames(scanTable[:])
)

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

func kernelName[T ~uint8](keys []string, v T, prefix string) string {
	if int(v) < len(keys) {
		return keys[v]
	}
	return prefix + fmt.Sprint(int(v))
}
