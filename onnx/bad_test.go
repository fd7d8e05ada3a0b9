package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/internal/testdevice"
	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

func mlpBytes(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "onnx", "mlp.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnsupportedNodesListedTogether(t *testing.T) {
	g := graphSpec{
		nodes: []*onnxpb.NodeProto{
			nodeOf("Relu", []string{"x"}, []string{"a"}),
			nodeOf("NonMaxSuppression", []string{"a"}, []string{"b"}),
			nodeOf("Relu", []string{"b"}, []string{"c"}),
			nodeOf("RoiAlign", []string{"c"}, []string{"y"}),
		},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, 4)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4)},
	}
	_, err := Load(g.bytes(t), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Nodes) != 2 {
		t.Fatalf("want an UnsupportedError naming 2 nodes, got %v", err)
	}
	for _, want := range []string{`"NonMaxSuppression_b" (NonMaxSuppression)`, `"RoiAlign_y" (RoiAlign)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestOpsetOutOfRange(t *testing.T) {
	g := graphSpec{opset: 11, nodes: []*onnxpb.NodeProto{nodeOf("Relu", []string{"x"}, []string{"y"})},
		inputs: []*onnxpb.ValueInfoProto{tensorInput("x", F, 4)}, outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4)}}
	if _, err := Load(g.bytes(t), Options{}); err == nil || !strings.Contains(err.Error(), "opset 11") {
		t.Fatalf("got %v", err)
	}
}

func TestCorruptFiles(t *testing.T) {
	data := mlpBytes(t)
	for _, cut := range []int{1, 10, len(data) / 3, len(data) / 2, len(data) - 7} {
		if _, err := Load(data[:cut], Options{}); err == nil {
			t.Errorf("truncated at %d of %d bytes: no error", cut, len(data))
		}
	}
	if _, err := Load([]byte("not a model at all, just text"), Options{}); err == nil {
		t.Error("text: no error")
	}
}

func TestHostileSizes(t *testing.T) {
	for _, dims := range [][]int64{{-1, 4}, {1 << 40, 1 << 40}, {1 << 20, 1 << 20}, {3, 4}} {
		tp := &onnxpb.TensorProto{Name: proto.String("w"), DataType: proto.Int32(int32(F)), Dims: dims, RawData: make([]byte, 8)}
		g := graphSpec{inits: []*onnxpb.TensorProto{tp}, nodes: []*onnxpb.NodeProto{nodeOf("Add", []string{"x", "w"}, []string{"y"})},
			inputs: []*onnxpb.ValueInfoProto{tensorInput("x", F, 4)}, outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4)}}
		if _, err := Load(g.bytes(t), Options{}); err == nil {
			t.Errorf("dims %v with 8 bytes: no error", dims)
		}
	}
	// A Reshape or ConstantOfShape to an enormous shape fails at load.
	g := graphSpec{inits: []*onnxpb.TensorProto{intInit("s", []int{3}, 1<<30, 1<<30, 1<<30)},
		nodes:  []*onnxpb.NodeProto{nodeOf("ConstantOfShape", []string{"s"}, []string{"y"})},
		inputs: []*onnxpb.ValueInfoProto{}, outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4)}}
	if _, err := Load(g.bytes(t), Options{}); err == nil {
		t.Error("ConstantOfShape of 2^90 elements: no error")
	}
}

func TestRunInputErrors(t *testing.T) {
	m, err := Load(mlpBytes(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dev := testdevice.CPU(t)
	x := tensor.Zeros(dev, 2, 20)
	defer x.Release()
	bad := tensor.Zeros(dev, 2, 21)
	defer bad.Release()
	ints := tensor.FromInt32(dev, make([]int32, 40), 2, 20)
	defer ints.Release()
	for _, c := range []struct {
		in   map[string]*tensor.Tensor
		want string
	}{
		{map[string]*tensor.Tensor{"inptu": x}, `unknown inputs ["inptu"], missing inputs ["input"]`},
		{map[string]*tensor.Tensor{}, `missing inputs ["input"]`},
		{map[string]*tensor.Tensor{"input": bad}, `input "input" has shape [2 21]`},
		{map[string]*tensor.Tensor{"input": ints}, `input "input" is int32`},
	} {
		_, err := m.Run(c.in)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// externalModel writes a one-initializer model whose weights live in
// location, relative to the model's folder.
func externalModel(t *testing.T, dir, location string) string {
	tp := &onnxpb.TensorProto{Name: proto.String("w"), DataType: proto.Int32(int32(F)), Dims: []int64{2},
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(location)}}}
	g := graphSpec{inits: []*onnxpb.TensorProto{tp}, nodes: []*onnxpb.NodeProto{nodeOf("Add", []string{"x", "w"}, []string{"y"})},
		inputs: []*onnxpb.ValueInfoProto{tensorInput("x", F, 2)}, outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 2)}}
	path := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(path, g.bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExternalData(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	weights := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40} // float32 1, 2
	for _, d := range []string{dir, outside} {
		if err := os.WriteFile(filepath.Join(d, "w.bin"), weights, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := LoadFile(externalModel(t, dir, "w.bin"))
	if err != nil {
		t.Fatal(err)
	}
	dev := testdevice.CPU(t)
	x := tensor.FromFloat32(dev, []float32{10, 20}, 2)
	defer x.Release()
	out, err := m.Run(map[string]*tensor.Tensor{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	got := testdevice.Float64s(t, out["y"])
	out["y"].Release()
	if got[0] != 11 || got[1] != 22 {
		t.Fatalf("x + external weights = %v, want [11 22]", got)
	}

	if err := os.Symlink(filepath.Join(outside, "w.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"../" + filepath.Base(outside) + "/w.bin", filepath.Join(outside, "w.bin"), "link.bin", "a/../../w.bin"} {
		_, err := LoadFile(externalModel(t, dir, loc))
		if !errors.Is(err, ErrExternalPath) {
			t.Errorf("location %q: got %v, want ErrExternalPath", loc, err)
		}
	}
	if _, err := Load(mustRead(t, externalModel(t, dir, "w.bin")), Options{}); err == nil {
		t.Error("external data without a folder: no error")
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Concurrent Runs of one model give each caller its own, correct result.
func TestConcurrentRuns(t *testing.T) {
	m, err := Load(mlpBytes(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dev := testdevice.CPU(t)
	run := func(seed float32) []float64 {
		v := make([]float32, 3*20)
		for k := range v {
			v[k] = seed * float32(k%7-3)
		}
		x := tensor.FromFloat32(dev, v, 3, 20)
		defer x.Release()
		out, err := m.Run(map[string]*tensor.Tensor{"input": x})
		if err != nil {
			t.Error(err)
			return nil
		}
		defer out["output"].Release()
		return testdevice.Float64s(t, out["output"])
	}
	want := map[int][]float64{}
	for s := range 4 {
		want[s] = run(float32(s) * 0.1)
	}
	var wg sync.WaitGroup
	for s := range 4 {
		for range 5 {
			wg.Go(func() {
				got := run(float32(s) * 0.1)
				for k := range got {
					if got[k] != want[s][k] {
						t.Errorf("seed %d element %d: %v, alone %v", s, k, got[k], want[s][k])
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func FuzzLoad(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "onnx", "mlp.onnx"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Load(b, Options{})
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
	})
}

// A shape an op rejects at run time is an error naming the node; an int64
// constant that a device needs but does not fit in int32 is an error
// naming the value.
func TestRunTimeErrorsNameTheNode(t *testing.T) {
	dev := testdevice.CPU(t)
	g := graphSpec{
		inits:   []*onnxpb.TensorProto{intInit("shape", []int{2}, 4, -1)},
		nodes:   []*onnxpb.NodeProto{nodeOf("Reshape", []string{"x", "shape"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("x", F, -1, 6)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 4, -1)},
	}
	m := g.load(t)
	x := tensor.Zeros(dev, 1, 6)
	defer x.Release()
	if _, err := m.Run(map[string]*tensor.Tensor{"x": x}); err == nil || !strings.Contains(err.Error(), `node "Reshape_y" (Reshape)`) {
		t.Errorf("reshape [1 6] to [4 -1]: got %v", err)
	}

	g = graphSpec{
		inits:   []*onnxpb.TensorProto{intInit("big", nil, 1<<40)},
		nodes:   []*onnxpb.NodeProto{nodeOf("Add", []string{"ids", "big"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("ids", onnxpb.TensorProto_INT64, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", onnxpb.TensorProto_INT64, 3)},
	}
	m = g.load(t)
	ids := tensor.FromInt32(dev, []int32{1, 2, 3}, 3)
	defer ids.Release()
	if _, err := m.Run(map[string]*tensor.Tensor{"ids": ids}); err == nil || !strings.Contains(err.Error(), `value "big"`) || !strings.Contains(err.Error(), "overflows int32") {
		t.Errorf("int64 constant 2^40 on a device: got %v", err)
	}

	// Device indices out of range: the tensor op's misuse panic comes
	// back as an error.
	g = graphSpec{
		inits:   []*onnxpb.TensorProto{floatInit("table", []int{4, 2}, make([]float64, 8))},
		nodes:   []*onnxpb.NodeProto{nodeOf("Gather", []string{"table", "ids"}, []string{"y"})},
		inputs:  []*onnxpb.ValueInfoProto{tensorInput("ids", onnxpb.TensorProto_INT64, 3)},
		outputs: []*onnxpb.ValueInfoProto{tensorInput("y", F, 3, 2)},
	}
	m = g.load(t)
	bad := tensor.FromInt32(dev, []int32{0, 9, 1}, 3)
	defer bad.Release()
	out, err := m.Run(map[string]*tensor.Tensor{"ids": bad})
	if err == nil {
		// Some backends report an out-of-range index at the read.
		_, err = out["y"].Float32s()
		out["y"].Release()
	}
	if err == nil {
		t.Error("Gather of index 9 from 4 rows: no error")
	}
}
