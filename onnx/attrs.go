package onnx

import (
	"fmt"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

func (n *node) attrInt(name string, def int) int {
	if a := n.attrs[name]; a != nil {
		return int(a.GetI())
	}
	return def
}

func (n *node) attrFloat(name string, def float64) float64 {
	if a := n.attrs[name]; a != nil {
		return float64(a.GetF())
	}
	return def
}

func (n *node) attrString(name, def string) string {
	if a := n.attrs[name]; a != nil {
		return string(a.GetS())
	}
	return def
}

func (n *node) attrInts(name string) ([]int, bool) {
	a := n.attrs[name]
	if a == nil {
		return nil, false
	}
	out := make([]int, len(a.GetInts()))
	for k, v := range a.GetInts() {
		out[k] = int(v)
	}
	return out, true
}

// attrTensor decodes a tensor attribute (no external data).
func (n *node) attrTensor(name string) (*hostTensor, error) {
	a := n.attrs[name]
	if a == nil || a.GetT() == nil {
		return nil, fmt.Errorf("attribute %q missing", name)
	}
	return decodeTensor(a.GetT(), "")
}

// input returns input k, or nil when absent.
func input(ins []*hostTensor, k int) *hostTensor {
	if k < len(ins) {
		return ins[k]
	}
	return nil
}

func scalarInts(v ...int64) *hostTensor {
	return newHostInts(onnxpb.TensorProto_INT64, []int{len(v)}, v)
}
