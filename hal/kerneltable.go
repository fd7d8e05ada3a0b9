package hal

import (
	"fmt"
	"slices"
	"strings"
)

// The kernel table: every key of Capabilities is declared once, below or
// (for the elementwise kernels) in the op table of optable.go, with the
// dtypes it is defined for, its tier, whether graph differentiates the ops
// that run it, how it fuses and its doc line. Kernels lists its keys; the
// backends declare their capabilities from it (each intersecting DTypes
// with the dtypes it holds), package tensor reads its dtype sets and names,
// and the conformance suite (package haltest) accepts a declared dtype only
// where DTypes has it and fails for a key it has no case for.

// Family is a group of kernels run by one Device method.
type Family uint8

// Families, in the order of Kernels.
const (
	FamilyFill Family = iota
	FamilyRandom
	FamilyCopy
	FamilyUnary
	FamilyBinary
	FamilyWhere
	FamilyReduce
	FamilyMatMul
	FamilyGather
	FamilyScatterAdd
	FamilyIm2Col
	FamilyCol2Im
	FamilyPool2D
	FamilyGridSample
	FamilyConv2D
	FamilySoftmax
	FamilyLayerNorm
	FamilyStep
	FamilyLinalg
	FamilySort
	FamilyScan
	FamilyResample
	numFamilies
)

// Families lists every family.
var Families = enumerate[Family](numFamilies)

type familyInfo struct {
	method   string   // the Device method
	prefix   string   // of its members' keys, for a family of several kernels
	operands []string // the method's views, in its order
}

var familyTable = [numFamilies]familyInfo{
	FamilyFill:       {"Fill", "", []string{"dst"}},
	FamilyRandom:     {"Random", "random.", []string{"dst"}},
	FamilyCopy:       {"Copy", "", []string{"dst", "src"}},
	FamilyUnary:      {"Unary", "unary.", []string{"dst", "src"}},
	FamilyBinary:     {"Binary", "binary.", []string{"dst", "a", "b"}},
	FamilyWhere:      {"Where", "", []string{"dst", "cond", "a", "b"}},
	FamilyReduce:     {"Reduce", "reduce.", []string{"dst", "src"}},
	FamilyMatMul:     {"MatMul", "", []string{"dst", "a", "b"}},
	FamilyGather:     {"Gather", "", []string{"dst", "src", "index"}},
	FamilyScatterAdd: {"ScatterAdd", "", []string{"dst", "index", "src"}},
	FamilyIm2Col:     {"Im2Col", "", []string{"dst", "src"}},
	FamilyCol2Im:     {"Col2Im", "", []string{"dst", "src"}},
	FamilyPool2D:     {"Pool2D", "pool2d.", []string{"dst", "indices", "src"}},
	FamilyGridSample: {"GridSample", "", []string{"dst", "src", "grid"}},
	FamilyConv2D:     {"Conv2D", "", []string{"dst", "src", "weight"}},
	FamilySoftmax:    {"Softmax", "", []string{"dst", "src"}},
	FamilyLayerNorm:  {"LayerNorm", "", []string{"dst", "src"}},
	FamilyStep:       {"Step", "step.", []string{"param", "grad", "state", "scale"}},
	FamilyLinalg:     {"Linalg", "linalg.", []string{"dst", "a", "b"}},
	FamilySort:       {"Sort", "", []string{"values", "indices", "src"}},
	FamilyScan:       {"Scan", "scan.", []string{"dst", "src"}},
	FamilyResample:   {"Resample", "", []string{"dst", "src"}},
}

// String is the family's Device method, e.g. "Reduce".
func (f Family) String() string {
	if f < numFamilies {
		return familyTable[f].method
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Operands names the views the family's Device method takes, in its
// order (Step's state is a slice of them).
func (f Family) Operands() []string {
	if f < numFamilies {
		return familyTable[f].operands
	}
	return nil
}

// Fusion says whether a backend may run a kernel inside a fused one.
type Fusion uint8

const (
	// Unfused: the kernel runs on its own (a reduction, a kernel that
	// reads neighbours or has side effects, Random's counter stream).
	Unfused Fusion = iota
	// FusesElementwise: the kernel's result is a value per element, so it
	// may join a fused elementwise kernel.
	FusesElementwise
	// FusesAsProducer: the kernel may start a fused group, the elementwise
	// kernels after it running as its epilogue (a GEMM, a convolution).
	FusesAsProducer
)

// Dtype sets of the table.
var (
	// FloatDTypes are the float dtypes.
	FloatDTypes = SetOf(Float32, Float64, Float16)
	// IntDTypes are the integer dtypes.
	IntDTypes = SetOf(Int32, Int64)
	// AllDTypes are every dtype.
	AllDTypes = SetOf(DTypes...)
)

// KernelInfo is one entry of the kernel table.
type KernelInfo struct {
	// Key is the kernel's key in Capabilities, e.g. "reduce.sum".
	Key string
	// Name is its Go name: the op constant ("Sum", "PoolMax", "Exp"), or
	// the Device method for a family of one kernel ("MatMul").
	Name   string
	Family Family
	// DTypes are the dtypes the kernel is defined for (its input's, as
	// Capabilities counts them). A backend declares it for those of them
	// it holds: Float64 on the CPU only, Float16 where the device computes
	// in it.
	DTypes DTypeSet
	// Optional puts the kernel in the optional fused tier (tiers.go).
	Optional bool
	// Differentiable says whether package graph differentiates the ops
	// that run the kernel.
	Differentiable bool
	Fusion         Fusion
	// Doc is what the kernel computes, in a line.
	Doc string
}

// single declares the kernel of a family of one: its key and name come
// from the family.
func single(f Family, key string, dtypes DTypeSet, differentiable bool, fusion Fusion, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: f.String(), Family: f, DTypes: dtypes,
		Differentiable: differentiable, Fusion: fusion, Doc: doc}
}

// Kernel keys of the families of one kernel.
const (
	KernelFill       = "fill"
	KernelCopy       = "copy"
	KernelWhere      = "where"
	KernelMatMul     = "matmul"
	KernelGather     = "gather"
	KernelScatterAdd = "scatter_add"
	KernelIm2Col     = "im2col"
	KernelCol2Im     = "col2im"
	KernelGridSample = "grid_sample"
	KernelConv2D     = "conv2d"
	KernelSoftmax    = "softmax"
	KernelLayerNorm  = "layer_norm"
	KernelSort       = "sort"
	KernelResample   = "resample"
)

var singleTable = map[Family]KernelInfo{
	FamilyFill:       single(FamilyFill, KernelFill, AllDTypes, false, FusesElementwise, "start + i·step"),
	FamilyCopy:       single(FamilyCopy, KernelCopy, AllDTypes, true, FusesElementwise, "x, converted to dst's dtype"),
	FamilyWhere:      single(FamilyWhere, KernelWhere, AllDTypes, true, FusesElementwise, "cond ≠ 0 ? a : b"),
	FamilyMatMul:     single(FamilyMatMul, KernelMatMul, FloatDTypes, true, FusesAsProducer, "alpha·a·b + beta·dst over the last two axes"),
	FamilyGather:     single(FamilyGather, KernelGather, AllDTypes, true, Unfused, "src at index along an axis, as torch.gather"),
	FamilyScatterAdd: single(FamilyScatterAdd, KernelScatterAdd, AllDTypes, true, Unfused, "dst[index] += src along an axis, as torch.scatter_add_"),
	FamilyIm2Col:     single(FamilyIm2Col, KernelIm2Col, FloatDTypes, true, Unfused, "NCHW images unfolded into columns"),
	FamilyCol2Im:     single(FamilyCol2Im, KernelCol2Im, FloatDTypes, true, Unfused, "columns folded back into NCHW images, overlaps summed"),
	FamilyGridSample: single(FamilyGridSample, KernelGridSample, FloatDTypes, true, Unfused, "bilinear samples of NCHW images at grid points"),
	FamilyConv2D: {Key: KernelConv2D, Name: "Conv2D", Family: FamilyConv2D, DTypes: FloatDTypes, Optional: true,
		Differentiable: true, Fusion: FusesAsProducer, Doc: "2-D cross-correlation of NCHW images, with groups"},
	FamilySoftmax: {Key: KernelSoftmax, Name: "Softmax", Family: FamilySoftmax, DTypes: FloatDTypes, Optional: true,
		Differentiable: true, Doc: "softmax (or log_softmax) along the last axis"},
	FamilyLayerNorm: {Key: KernelLayerNorm, Name: "LayerNorm", Family: FamilyLayerNorm, DTypes: FloatDTypes, Optional: true,
		Differentiable: true, Doc: "(x − mean)/√(var + eps) along the last axis, biased variance, two-pass"},
	FamilySort:     single(FamilySort, KernelSort, AllDTypes, true, Unfused, "values and Int32 indices sorted along the last axis, NaN as the largest"),
	FamilyResample: single(FamilyResample, KernelResample, FloatDTypes, true, Unfused, "a sparse matrix (CSR taps) applied along one axis, as interpolate"),
}

func reduction(name, key string, dtypes DTypeSet, differentiable bool, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: name, Family: FamilyReduce, DTypes: dtypes, Differentiable: differentiable, Doc: doc}
}

var reduceTable = [numReduceOps]KernelInfo{
	Sum:       reduction("Sum", "reduce.sum", AllDTypes, true, "Σ x"),
	Prod:      reduction("Prod", "reduce.prod", AllDTypes, true, "Π x"),
	Max:       reduction("Max", "reduce.max", AllDTypes, true, "max x, NaN propagating"),
	Min:       reduction("Min", "reduce.min", AllDTypes, true, "min x, NaN propagating"),
	ArgMax:    reduction("ArgMax", "reduce.argmax", AllDTypes, false, "the index of the first max x, as Int32 (int64 in PyTorch: Cast it)"),
	ArgMin:    reduction("ArgMin", "reduce.argmin", AllDTypes, false, "the index of the first min x, as Int32"),
	LogSumExp: reduction("LogSumExp", "reduce.logsumexp", FloatDTypes, true, "ln Σ eˣ, max-subtracted"),
}

var poolTable = [numPoolOps]KernelInfo{
	PoolMax: {Key: "pool2d.max", Name: "PoolMax", Family: FamilyPool2D, DTypes: FloatDTypes, Differentiable: true,
		Doc: "the maximum of each window, and its index"},
	PoolAvg: {Key: "pool2d.avg", Name: "PoolAvg", Family: FamilyPool2D, DTypes: FloatDTypes, Differentiable: true,
		Doc: "the mean of each window"},
}

func distribution(name, key, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: name, Family: FamilyRandom, DTypes: FloatDTypes, Doc: doc}
}

var distributionTable = [numDistributions]KernelInfo{
	Uniform:   distribution("Uniform", "random.uniform", "uniform in [0, 1), from Philox4x32-10"),
	Normal:    distribution("Normal", "random.normal", "standard normal, from Philox4x32-10"),
	Bernoulli: distribution("Bernoulli", "random.bernoulli", "1 with probability p, else 0, from Philox4x32-10"),
}

func update(name, key, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: name, Family: FamilyStep, DTypes: FloatDTypes, Optional: true, Doc: doc}
}

var optimizerTable = [numOptimizers]KernelInfo{
	SGD:     update("SGD", "step.sgd", "one SGD step, with momentum, dampening and Nesterov"),
	Adam:    update("Adam", "step.adam", "one Adam (or AdamW) step"),
	RMSProp: update("RMSProp", "step.rmsprop", "one RMSProp step, centered or not, with momentum"),
	Adagrad: update("Adagrad", "step.adagrad", "one Adagrad step"),
}

func scan(name, key string, dtypes DTypeSet, doc string) KernelInfo {
	return KernelInfo{Key: key, Name: name, Family: FamilyScan, DTypes: dtypes, Differentiable: true, Doc: doc}
}

var scanTable = [numScanOps]KernelInfo{
	Cumsum:       scan("Cumsum", "scan.cumsum", AllDTypes, "inclusive Σ x along the last axis"),
	Cumprod:      scan("Cumprod", "scan.cumprod", AllDTypes, "inclusive Π x along the last axis"),
	LogCumSumExp: scan("LogCumSumExp", "scan.logcumsumexp", FloatDTypes, "inclusive ln Σ eˣ along the last axis, max-shifted"),
}

// elementwiseKernel is the kernel table's entry of an op-table entry.
func elementwiseKernel(f Family, key string, o OpInfo) KernelInfo {
	dtypes := FloatDTypes
	if o.Int32 == Int32Runs {
		dtypes = AllDTypes
	}
	fusion := Unfused
	if o.Fusible {
		fusion = FusesElementwise
	}
	return KernelInfo{Key: key, Name: o.Name, Family: f, DTypes: dtypes, Optional: o.Optional,
		Differentiable: o.Differentiable, Fusion: fusion, Doc: o.Doc}
}

// Info returns op's entry in the kernel table; an unknown op has a zero
// entry.
func (op ReduceOp) Info() KernelInfo { return entry(reduceTable[:], op) }

// Info returns op's entry in the kernel table; an unknown op has a zero
// entry.
func (op PoolOp) Info() KernelInfo { return entry(poolTable[:], op) }

// Info returns d's entry in the kernel table; an unknown d has a zero
// entry.
func (d Distribution) Info() KernelInfo { return entry(distributionTable[:], d) }

// Info returns o's entry in the kernel table; an unknown o has a zero
// entry.
func (o Optimizer) Info() KernelInfo { return entry(optimizerTable[:], o) }

// Info returns op's entry in the kernel table; an unknown op has a zero
// entry.
func (op ScanOp) Info() KernelInfo { return entry(scanTable[:], op) }

func entry[T ~uint8](table []KernelInfo, v T) KernelInfo {
	if int(v) < len(table) {
		return table[v]
	}
	return KernelInfo{}
}

// kernelTable is every kernel, in the order of Kernels: by family, and in
// a family by its op constants.
var kernelTable, kernelIndex = func() ([]KernelInfo, map[string]int) {
	var table []KernelInfo
	for _, f := range Families {
		switch f {
		case FamilyRandom:
			table = append(table, distributionTable[:]...)
		case FamilyUnary:
			for _, op := range UnaryOps {
				table = append(table, elementwiseKernel(f, op.Kernel(), op.Info()))
			}
		case FamilyBinary:
			for _, op := range BinaryOps {
				table = append(table, elementwiseKernel(f, op.Kernel(), op.Info()))
			}
		case FamilyReduce:
			table = append(table, reduceTable[:]...)
		case FamilyPool2D:
			table = append(table, poolTable[:]...)
		case FamilyStep:
			table = append(table, optimizerTable[:]...)
		case FamilyLinalg:
			table = append(table, linalgTable[:]...)
		case FamilyScan:
			table = append(table, scanTable[:]...)
		default:
			table = append(table, singleTable[f])
		}
	}
	index := make(map[string]int, len(table))
	for i, k := range table {
		index[k.Key] = i
	}
	return table, index
}()

// Kernels lists every kernel key a backend may declare, in a stable order.
func Kernels() []string {
	out := make([]string, len(kernelTable))
	for i, k := range kernelTable {
		out[i] = k.Key
	}
	return out
}

// KernelTable returns every entry of the kernel table, in the order of
// Kernels.
func KernelTable() []KernelInfo { return append([]KernelInfo(nil), kernelTable...) }

// LookupKernel returns the entry of kernel (a key of Capabilities).
func LookupKernel(kernel string) (KernelInfo, bool) {
	i, ok := kernelIndex[kernel]
	if !ok {
		return KernelInfo{}, false
	}
	return kernelTable[i], true
}

// Declare adds to c every kernel of the families a backend implements,
// each for the dtypes of its entry that the backend holds (held).
func (c Capabilities) Declare(held DTypeSet, families ...Family) {
	for _, k := range kernelTable {
		if slices.Contains(families, k.Family) {
			c[k.Key] = k.DTypes & held
		}
	}
}

// shortNames are the keys of a family's members without its prefix, for
// the op constants' String methods.
func shortNames(table []KernelInfo) []string {
	out := make([]string, len(table))
	for i, k := range table {
		out[i] = strings.TrimPrefix(k.Key, familyTable[k.Family].prefix)
	}
	return out
}

// keysOf are the keys of a family's members.
func keysOf(table []KernelInfo) []string {
	out := make([]string, len(table))
	for i, k := range table {
		out[i] = k.Key
	}
	return out
}
