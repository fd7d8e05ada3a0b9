package hal

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestKernelTableIsWellFormed: every kernel is declared once, under its
// family's prefix, with a name, a doc line and Float32 among its dtypes
// (the dtype every device runs).
func TestKernelTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for i, k := range KernelTable() {
		if k.Key == "" || k.Name == "" || k.Doc == "" {
			t.Errorf("entry %d: key %q, name %q, doc %q: none may be empty", i, k.Key, k.Name, k.Doc)
		}
		if seen[k.Key] {
			t.Errorf("%s declared twice", k.Key)
		}
		seen[k.Key] = true
		if k.Family >= numFamilies {
			t.Errorf("%s: unknown family %d", k.Key, k.Family)
			continue
		}
		if prefix := familyTable[k.Family].prefix; prefix != "" && !strings.HasPrefix(k.Key, prefix) {
			t.Errorf("%s: a %v kernel's key starts with %q", k.Key, k.Family, prefix)
		}
		if !k.DTypes.Has(Float32) || k.DTypes&^AllDTypes != 0 {
			t.Errorf("%s: dtypes %v", k.Key, k.DTypes.List())
		}
		if got, ok := LookupKernel(k.Key); !ok || !reflect.DeepEqual(got, k) {
			t.Errorf("LookupKernel(%q) = %+v, %v", k.Key, got, ok)
		}
	}
	if _, ok := LookupKernel("reduce.mean"); ok {
		t.Error("LookupKernel found a kernel the table does not declare")
	}
}

// TestKernelsAreTheContractsKeys pins the keys and their order, which
// backends, the conformance suite and the README's table rely on.
func TestKernelsAreTheContractsKeys(t *testing.T) {
	want := []string{"fill", "random.uniform", "random.normal", "random.bernoulli", "copy"}
	for _, op := range UnaryOps {
		want = append(want, "unary."+op.Info().Key)
	}
	for _, op := range BinaryOps {
		want = append(want, "binary."+op.Info().Key)
	}
	want = append(want, "where", "reduce.sum", "reduce.prod", "reduce.max", "reduce.min", "reduce.argmax",
		"reduce.argmin", "reduce.logsumexp", "matmul", "gather", "scatter_add", "im2col", "col2im",
		"pool2d.max", "pool2d.avg", "grid_sample", "conv2d", "softmax", "layer_norm", "step.sgd", "step.adam",
		"step.rmsprop", "step.adagrad",
		"linalg.solve", "linalg.inv", "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.eigh",
		"sort", "scan.cumsum", "scan.cumprod", "scan.logcumsumexp", "resample")
	if got := Kernels(); !slices.Equal(got, want) {
		t.Errorf("Kernels() = %v\nwant %v", got, want)
	}
	for _, op := range ReduceOps {
		if op.Kernel() != "reduce."+op.String() || op.Info().Key != op.Kernel() {
			t.Errorf("%v: key %q, entry %q", op, op.Kernel(), op.Info().Key)
		}
	}
	if PoolMax.Kernel() != "pool2d.max" || Adam.Kernel() != "step.adam" || Normal.String() != "normal" || LogSumExp.String() != "logsumexp" {
		t.Error("the op constants' keys and names are not the table's")
	}
	for _, op := range ScanOps {
		if op.Kernel() != "scan."+op.String() || op.Info().Key != op.Kernel() {
			t.Errorf("%v: key %q, entry %q", op, op.Kernel(), op.Info().Key)
		}
	}
	if Cumsum.Kernel() != "scan.cumsum" || LogCumSumExp.String() != "logcumsumexp" || ScanOp(99).Info().Key != "" {
		t.Error("the scan constants' keys and names are not the table's")
	}
	if got := ReduceOp(99).Info(); got.Key != "" {
		t.Errorf("an unknown reduction has entry %+v", got)
	}
}

// TestKernelTableDTypes pins the dtype rules: Int32 runs the kernels that
// move, select, compare or count values and the elementwise ops the op
// table lets it run; every other kernel is float-only (linalg without
// Float16).
func TestKernelTableDTypes(t *testing.T) {
	var ints []string
	for _, k := range KernelTable() {
		if k.DTypes.Has(Int32) {
			ints = append(ints, k.Key)
		}
		want := AllDTypes &^ IntDTypes
		if k.Family == FamilyLinalg {
			want = SetOf(Float32, Float64) // as torch.linalg: no half
		}
		if !k.DTypes.Has(Int32) && k.DTypes != want {
			t.Errorf("%s: %v", k.Key, k.DTypes.List())
		}
		// Int64 runs exactly the kernels Int32 runs.
		if k.DTypes.Has(Int32) != k.DTypes.Has(Int64) {
			t.Errorf("%s: Int32 and Int64 differ: %v", k.Key, k.DTypes.List())
		}
	}
	want := []string{"fill", "copy", "unary.neg", "unary.abs", "unary.sign", "unary.square", "unary.relu", "unary.clamp",
		"binary.add", "binary.sub", "binary.mul", "binary.maximum", "binary.minimum", "binary.eq", "binary.ne", "binary.lt",
		"binary.le", "binary.gt", "binary.ge", "binary.relu_grad", "where", "reduce.sum", "reduce.prod", "reduce.max", "reduce.min",
		"reduce.argmax", "reduce.argmin", "gather", "scatter_add", "sort", "scan.cumsum", "scan.cumprod"}
	if !slices.Equal(ints, want) {
		t.Errorf("Int32 kernels %v\nwant %v", ints, want)
	}
}

// TestOptionalTier: the optional tier is the fused kernels tiers.go lists.
func TestOptionalTier(t *testing.T) {
	var got []string
	for _, k := range Kernels() {
		if Optional(k) {
			got = append(got, k)
		}
	}
	want := []string{"unary.sigmoid", "unary.leaky_relu", "unary.elu", "unary.gelu", "unary.gelu_tanh", "unary.silu",
		"unary.softplus", "conv2d", "softmax", "layer_norm", "step.sgd", "step.adam", "step.rmsprop", "step.adagrad",
		"linalg.solve", "linalg.inv", "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.eigh"}
	if !slices.Equal(got, want) {
		t.Errorf("optional tier %v\nwant %v", got, want)
	}
	if Optional("no.such.kernel") {
		t.Error("an unknown kernel is optional")
	}
}

// TestFamiliesNameDeviceMethods: each family's method exists on Device and
// takes the views Operands names.
func TestFamiliesNameDeviceMethods(t *testing.T) {
	device := reflect.TypeFor[Device]()
	view, views := reflect.TypeFor[View](), reflect.TypeFor[[]View]()
	for _, f := range Families {
		m, ok := device.MethodByName(f.String())
		if !ok {
			t.Errorf("family %v: Device has no such method", f)
			continue
		}
		n := 0
		for i := range m.Type.NumIn() {
			if in := m.Type.In(i); in == view || in == views {
				n++
			}
		}
		if n != len(f.Operands()) {
			t.Errorf("%v takes %d views, Operands names %v", f, n, f.Operands())
		}
	}
	if Family(200).String() != "Family(200)" || Family(200).Operands() != nil {
		t.Error("an unknown family has a name or operands")
	}
}

// TestDeclare: a backend's capabilities are its families' kernels at the
// dtypes both the table and the backend hold.
func TestDeclare(t *testing.T) {
	c := Capabilities{}
	c.Declare(SetOf(Float32, Int32), FamilyReduce, FamilySoftmax)
	if len(c) != len(ReduceOps)+1 {
		t.Errorf("declared %d kernels, want %d", len(c), len(ReduceOps)+1)
	}
	if c[KernelSoftmax] != SetOf(Float32) || c[Sum.Kernel()] != SetOf(Float32, Int32) || c[LogSumExp.Kernel()] != SetOf(Float32) {
		t.Errorf("declared %v", c)
	}
	if _, ok := c[KernelMatMul]; ok {
		t.Error("declared a kernel of a family not asked for")
	}
}
