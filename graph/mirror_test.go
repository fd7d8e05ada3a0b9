package graph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// notRecorded are the methods of tensor.Tensor that Value leaves out, and
// why; a Value reaches them through Tensor().
var notRecorded = map[string]string{
	"Err":          "a Value's failures surface when it is read or differentiated",
	"IsContiguous": "a storage detail of the tensor, not of the recorded value",
	"Strides":      "a storage detail of the tensor, not of the recorded value",
	"To":           "not recorded: move leaves to one device before recording, as a graph's backward pass runs where its data is",
}

// TestValueMirrorsTensor checks that graph mirrors tensor's API: every
// method of tensor.Tensor has a Value method of the same name (the
// generated elementwise ones and the hand-written recorders alike),
// except those notRecorded names; so a method added to Tensor fails here
// until graph records it or says why not.
func TestValueMirrorsTensor(t *testing.T) {
	tensorType, valueType := reflect.TypeOf(&tensor.Tensor{}), reflect.TypeOf(&graph.Value{})
	for i := range tensorType.NumMethod() {
		name := tensorType.Method(i).Name
		_, mirrored := valueType.MethodByName(name)
		why, excused := notRecorded[name]
		switch {
		case !mirrored && !excused:
			t.Errorf("tensor.Tensor.%s has no graph.Value.%s: record it, or add it to notRecorded with the reason", name, name)
		case mirrored && excused:
			t.Errorf("graph.Value.%s exists, but notRecorded says %q", name, why)
		}
	}
	for name := range notRecorded {
		if _, ok := tensorType.MethodByName(name); !ok {
			t.Errorf("notRecorded lists %s, which tensor.Tensor does not have", name)
		}
	}
}

// notRecordedFuncs are the functions of package tensor over tensors that
// graph leaves out, and why.
var notRecordedFuncs = map[string]string{
	"ZerosLike": "makes a constant: wrap its tensor with Constant",
	"OnesLike":  "makes a constant: wrap its tensor with Constant",
	"FullLike":  "makes a constant: wrap its tensor with Constant",
	"Step":      "an optimizer's in-place update, outside any graph",
	// The ONNX importer's inference path over host-computed taps;
	// graph.Interpolate records resampling with its gradient.
	"ResampleAlong": "inference over caller-made taps (ONNX Resize): use graph.Interpolate to differentiate",
}

// TestFunctionsMirrorTensor is TestValueMirrorsTensor for package
// functions: every exported function of package tensor with a *Tensor
// parameter has a graph function of the same name, or a reason in
// notRecordedFuncs.
func TestFunctionsMirrorTensor(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("parses package tensor's source folder, which js/wasm cannot list (no O_DIRECTORY in a browser)")
	}
	tensorFuncs, graphFuncs := exportedFuncs(t, "../tensor", "Tensor"), exportedFuncs(t, ".", "")
	for name := range tensorFuncs {
		why, excused := notRecordedFuncs[name]
		switch {
		case !graphFuncs[name] && !excused:
			t.Errorf("tensor.%s has no graph.%s: record it, or add it to notRecordedFuncs with the reason", name, name)
		case graphFuncs[name] && excused:
			t.Errorf("graph.%s exists, but notRecordedFuncs says %q", name, why)
		}
	}
	for name := range notRecordedFuncs {
		if !tensorFuncs[name] {
			t.Errorf("notRecordedFuncs lists %s, which package tensor does not have", name)
		}
	}
}

// exportedFuncs returns the exported functions (not methods) of the
// package in dir, those with a parameter of a type named param when param
// is not empty.
func exportedFuncs(t *testing.T, dir, param string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !fn.Name.IsExported() {
					continue
				}
				if param == "" || takes(fn, param) {
					names[fn.Name.Name] = true
				}
			}
		}
	}
	return names
}

// takes reports whether fn has a parameter whose type mentions the type
// named typ (*T, []*T, ...*T).
func takes(fn *ast.FuncDecl, typ string) bool {
	found := false
	for _, field := range fn.Type.Params.List {
		ast.Inspect(field.Type, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == typ {
				found = true
			}
			return !found
		})
	}
	return found
}
