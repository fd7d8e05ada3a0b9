package onnx

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Helpers that build small ONNX graphs in Go with the generated types.

func floatInit(name string, shape []int, v []float64) *onnxpb.TensorProto {
	tp := &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT))}
	for _, d := range shape {
		tp.Dims = append(tp.Dims, int64(d))
	}
	for _, x := range v {
		tp.FloatData = append(tp.FloatData, float32(x))
	}
	return tp
}

func intInit(name string, shape []int, v ...int64) *onnxpb.TensorProto {
	tp := &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: v}
	for _, d := range shape {
		tp.Dims = append(tp.Dims, int64(d))
	}
	return tp
}

// tensorInput declares a graph input or output; a negative dimension is
// symbolic ("batch").
func tensorInput(name string, elem onnxpb.TensorProto_DataType, shape ...int) *onnxpb.ValueInfoProto {
	sh := &onnxpb.TensorShapeProto{}
	for _, d := range shape {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		if d < 0 {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
		} else {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}
		}
		sh.Dim = append(sh.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: sh}}}}
}

func nodeOf(op string, inputs, outputs []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{Name: proto.String(op + "_" + outputs[0]), OpType: proto.String(op), Input: inputs, Output: outputs, Attribute: attrs}
}

func attrI(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrF(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func attrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

type graphSpec struct {
	nodes   []*onnxpb.NodeProto
	inits   []*onnxpb.TensorProto
	inputs  []*onnxpb.ValueInfoProto
	outputs []*onnxpb.ValueInfoProto
	opset   int64
}

func (g graphSpec) bytes(t testing.TB) []byte {
	t.Helper()
	opset := g.opset
	if opset == 0 {
		opset = 17
	}
	mp := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph: &onnxpb.GraphProto{Name: proto.String("test"), Node: g.nodes, Initializer: g.inits,
			Input: g.inputs, Output: g.outputs},
	}
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (g graphSpec) load(t testing.TB) *Model {
	t.Helper()
	m, err := Load(g.bytes(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func randn(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for k := range v {
		v[k] = r.NormFloat64()
	}
	return v
}

func count(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
