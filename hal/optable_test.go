package hal

import "testing"

// TestOpTableIsWellFormed: every entry names its op and kernel once, and
// declares no more parameters than Args holds.
func TestOpTableIsWellFormed(t *testing.T) {
	names, keys := map[string]bool{}, map[string]bool{}
	check := func(kind string, i int, o OpInfo) {
		if o.Name == "" || o.Key == "" || o.Doc == "" {
			t.Errorf("%s op %d: name %q, key %q, doc %q: none may be empty", kind, i, o.Name, o.Key, o.Doc)
		}
		if names[o.Name] || keys[kind+"."+o.Key] {
			t.Errorf("%s op %d: %s (%s) declared twice", kind, i, o.Name, o.Key)
		}
		names[o.Name], keys[kind+"."+o.Key] = true, true
		if len(o.Params) > 2 {
			t.Errorf("%s: %d parameters, Args holds 2", o.Name, len(o.Params))
		}
	}
	for _, op := range UnaryOps {
		check("unary", int(op), op.Info())
		if got, want := op.Kernel(), "unary."+op.Info().Key; got != want {
			t.Errorf("%s.Kernel() = %q, want %q", op.Info().Name, got, want)
		}
	}
	for _, op := range BinaryOps {
		info := op.Info()
		check("binary", int(op), info)
		if op.IsComparison() && info.Differentiable {
			t.Errorf("%s writes a mask but is marked differentiable", info.Name)
		}
		if len(info.Params) != 0 {
			t.Errorf("binary %s declares parameters", info.Name)
		}
	}
	if Expm1.String() != "expm1" || !Neg.RunsInt32() || Exp.RunsInt32() || Div.RunsInt32() || !Add.RunsInt32() {
		t.Error("the table's Int32 rules or names are not the documented ones")
	}
	if got := UnaryOp(200).Info(); got.Name != "" {
		t.Errorf("an unknown op has entry %+v", got)
	}
}
