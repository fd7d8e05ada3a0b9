package onnx

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/onnx/internal/onnxpb"
	"github.com/webtensor/webtensor/tensor"
)

// Opset versions of the default ("ai.onnx") domain the importer runs.
const (
	MinOpset = 13
	MaxOpset = 17
)

// Options configure Load and Read.
type Options struct {
	// Dir is the folder external-data files are read from (confined to
	// it); "" rejects models with external data. LoadFile sets it to the
	// model file's folder.
	Dir string
}

// ValueInfo describes a graph input or output.
type ValueInfo struct {
	Name string
	// ElemType is ONNX's element type name: "FLOAT", "INT64", …
	ElemType string
	// Shape has -1 for a dimension the model leaves open; DimNames holds
	// its symbolic name ("batch") where the model gives one.
	Shape    []int
	DimNames []string
}

func (v ValueInfo) String() string {
	dims := make([]string, len(v.Shape))
	for k, d := range v.Shape {
		switch {
		case d >= 0:
			dims[k] = fmt.Sprint(d)
		case v.DimNames[k] != "":
			dims[k] = v.DimNames[k]
		default:
			dims[k] = "?"
		}
	}
	return fmt.Sprintf("%s %s[%s]", v.Name, v.ElemType, strings.Join(dims, ", "))
}

// Model is a loaded ONNX graph, ready to run on any device. Its methods
// are safe for concurrent use.
type Model struct {
	// Inputs and Outputs are the graph's inputs (initializers excluded)
	// and outputs, in the file's order.
	Inputs, Outputs []ValueInfo
	// Opset is the default domain's opset version; Producer names the
	// exporter ("pytorch 1.13.1").
	Opset    int64
	Producer string

	inputElem  map[string]int32
	consts     map[string]*hostTensor // initializers and folded values
	params     map[string]bool        // initializer names
	plan       []*node                // nodes left to run after folding
	lastUse    map[string]int         // value name → index in plan of its last reader
	outputs    map[string]bool
	opCounts   map[string]int
	paramCount int64

	mu       sync.Mutex
	uploaded map[uploadKey]*tensor.Tensor
}

type uploadKey struct {
	dev   *tensor.Device
	name  string
	float tensor.DType
}

// node is one NodeProto with its attributes by name.
type node struct {
	name, op        string
	inputs, outputs []string
	attrs           map[string]*onnxpb.AttributeProto
}

func (n *node) String() string { return fmt.Sprintf("node %q (%s)", n.name, n.op) }

// LoadFile reads an .onnx file; external data is read from its folder.
func LoadFile(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return Load(data, Options{Dir: filepath.Dir(path)})
}

// Read reads a model from r.
func Read(r io.Reader, o Options) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return Load(data, o)
}

// Load decodes a serialized ModelProto, checks that every node can run,
// and folds everything computable from constants (the shape arithmetic of
// PyTorch's exporter) on the host.
func Load(data []byte, o Options) (*Model, error) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("onnx: not a model file: %w", err)
	}
	m, err := build(&mp, o)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return m, nil
}

func build(mp *onnxpb.ModelProto, o Options) (*Model, error) {
	g := mp.GetGraph()
	if g == nil {
		return nil, errors.New("model has no graph")
	}
	m := &Model{
		Producer:  strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion()),
		inputElem: map[string]int32{},
		consts:    map[string]*hostTensor{},
		params:    map[string]bool{},
		lastUse:   map[string]int{},
		outputs:   map[string]bool{},
		opCounts:  map[string]int{},
		uploaded:  map[uploadKey]*tensor.Tensor{},
	}
	for _, op := range mp.GetOpsetImport() {
		if op.GetDomain() == "" || op.GetDomain() == "ai.onnx" {
			m.Opset = op.GetVersion()
		}
	}
	if m.Opset < MinOpset || m.Opset > MaxOpset {
		return nil, fmt.Errorf("opset %d of the default domain is not supported (%d to %d are)", m.Opset, MinOpset, MaxOpset)
	}
	for _, init := range g.GetInitializer() {
		h, err := decodeTensor(init, o.Dir)
		if err != nil {
			return nil, fmt.Errorf("initializer: %w", err)
		}
		m.consts[init.GetName()] = h
		m.params[init.GetName()] = true
		m.paramCount += int64(h.len())
	}
	for _, vi := range g.GetInput() {
		if _, isInit := m.consts[vi.GetName()]; isInit {
			continue
		}
		info, elem, err := valueInfo(vi)
		if err != nil {
			return nil, err
		}
		m.Inputs = append(m.Inputs, info)
		m.inputElem[info.Name] = elem
	}
	for _, vi := range g.GetOutput() {
		info, _, err := valueInfo(vi)
		if err != nil {
			return nil, err
		}
		m.Outputs = append(m.Outputs, info)
		m.outputs[info.Name] = true
	}
	nodes, err := m.checkNodes(g.GetNode())
	if err != nil {
		return nil, err
	}
	if err := m.fold(nodes); err != nil {
		return nil, err
	}
	for _, out := range m.Outputs {
		if _, ok := m.consts[out.Name]; !ok && !m.produced(out.Name) && m.inputElem[out.Name] == 0 {
			return nil, fmt.Errorf("graph output %q is not computed by any node", out.Name)
		}
	}
	for k, n := range m.plan {
		for _, in := range n.inputs {
			m.lastUse[in] = k
		}
	}
	return m, nil
}

func (m *Model) produced(name string) bool {
	for _, n := range m.plan {
		if slices.Contains(n.outputs, name) {
			return true
		}
	}
	return false
}

func valueInfo(vi *onnxpb.ValueInfoProto) (ValueInfo, int32, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return ValueInfo{}, 0, fmt.Errorf("graph input/output %q is not a tensor", vi.GetName())
	}
	info := ValueInfo{Name: vi.GetName(), ElemType: onnxpb.TensorProto_DataType(tt.GetElemType()).String()}
	for _, d := range tt.GetShape().GetDim() {
		v := int(-1)
		if d.GetDimValue() > 0 && d.GetDimValue() <= maxHostElements {
			v = int(d.GetDimValue())
		}
		info.Shape = append(info.Shape, v)
		info.DimNames = append(info.DimNames, d.GetDimParam())
	}
	return info, tt.GetElemType(), nil
}

// checkNodes converts the nodes and returns one error naming every node
// the importer cannot run, and every value read before it is written.
func (m *Model) checkNodes(protos []*onnxpb.NodeProto) ([]*node, error) {
	var unsupported, problems []string
	known := map[string]bool{"": true}
	for name := range m.consts {
		known[name] = true
	}
	for name := range m.inputElem {
		known[name] = true
	}
	var nodes []*node
	for k, np := range protos {
		n := &node{name: np.GetName(), op: np.GetOpType(), inputs: np.GetInput(), outputs: np.GetOutput(), attrs: map[string]*onnxpb.AttributeProto{}}
		if n.name == "" {
			n.name = fmt.Sprintf("#%d", k)
		}
		for _, a := range np.GetAttribute() {
			n.attrs[a.GetName()] = a
		}
		m.opCounts[n.op]++
		domain := np.GetDomain()
		if _, ok := opTable[n.op]; !ok || domain != "" && domain != "ai.onnx" {
			op := n.op
			if domain != "" && domain != "ai.onnx" {
				op = domain + "." + op
			}
			unsupported = append(unsupported, fmt.Sprintf("%q (%s)", n.name, op))
		} else if err := opTable[n.op].checkNode(n); err != nil {
			problems = append(problems, fmt.Sprintf("%v: %v", n, err))
		}
		for _, in := range n.inputs {
			if !known[in] {
				problems = append(problems, fmt.Sprintf("%v reads %q before any node writes it (nodes must be in topological order)", n, in))
			}
		}
		for _, out := range n.outputs {
			known[out] = true
		}
		nodes = append(nodes, n)
	}
	var msgs []string
	if len(unsupported) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d unsupported node(s): %s", len(unsupported), strings.Join(unsupported, ", ")))
	}
	msgs = append(msgs, problems...)
	if len(msgs) > 0 {
		return nil, &UnsupportedError{Nodes: unsupported, Problems: problems, msg: strings.Join(msgs, "; ")}
	}
	return nodes, nil
}

// UnsupportedError lists every node Load cannot run.
type UnsupportedError struct {
	// Nodes are `"name" (OpType)` of nodes whose operator the importer
	// lacks; Problems the nodes with attributes it cannot honour.
	Nodes, Problems []string
	msg             string
}

func (e *UnsupportedError) Error() string { return e.msg }

// fold runs, at load time, every node whose inputs are all constants and
// whose operator has a host implementation; the rest form the plan.
func (m *Model) fold(nodes []*node) error {
	for _, n := range nodes {
		op := opTable[n.op]
		allConst := op.host != nil
		for _, in := range n.inputs {
			if _, ok := m.consts[in]; in != "" && !ok {
				allConst = false
			}
		}
		if !allConst {
			m.plan = append(m.plan, n)
			continue
		}
		ins := make([]*hostTensor, len(n.inputs))
		for k, in := range n.inputs {
			ins[k] = m.consts[in]
		}
		outs, err := runHost(op, n, ins)
		if err != nil {
			return fmt.Errorf("%v: %w", n, err)
		}
		for k, out := range n.outputs {
			if k < len(outs) && out != "" {
				m.consts[out] = outs[k]
			}
		}
	}
	return nil
}

// runHost runs a host implementation, turning a panic from malformed
// arguments into an error.
func runHost(op opDef, n *node, ins []*hostTensor) (outs []*hostTensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid arguments: %v", r)
		}
	}()
	return op.host(n, ins)
}

// OpCounts returns how many nodes of each operator type the file has
// (before constant folding).
func (m *Model) OpCounts() map[string]int { return maps.Clone(m.opCounts) }

// ParameterCount returns the number of elements in the initializers.
func (m *Model) ParameterCount() int64 { return m.paramCount }

// PlanLen returns how many nodes run per call after constant folding.
func (m *Model) PlanLen() int { return len(m.plan) }

// Close releases the weights uploaded to devices. The model stays usable:
// the next Run uploads them again.
func (m *Model) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := slices.Collect(maps.Keys(m.uploaded))
	sort.Slice(keys, func(a, b int) bool { return keys[a].name < keys[b].name })
	for _, k := range keys {
		m.uploaded[k].Release()
		delete(m.uploaded, k)
	}
}
