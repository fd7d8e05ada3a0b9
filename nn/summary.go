package nn

import (
	"reflect"
	"slices"
	"strconv"

	"github.com/webtensor/webtensor/graph"
	"github.com/webtensor/webtensor/tensor"
)

// ModelSummary is what Summary found: one row per module, the root first
// and then its children depth-first in their order, and the totals. Print
// it (String) for a table like torchinfo's.
type ModelSummary struct {
	Rows []SummaryRow
	// Params counts the elements of every parameter (all are trainable:
	// a Module's Parameters require gradients); Buffers the elements of
	// the saved, untrained state (BatchNorm's running statistics), which
	// Keras calls non-trainable parameters.
	Params, Buffers int
	// ParamBytes and BufferBytes are their memory, by their dtypes.
	ParamBytes, BufferBytes int64
	// InputShape is the shape of the sample input.
	InputShape []int
}

// SummaryRow is one module of a ModelSummary.
type SummaryRow struct {
	Path  string // dotted state-dict path ("1.conv"); "" for the root
	Name  string // the last element of Path
	Type  string // TypeName
	Depth int    // 0 for the root
	// OutputShape is the shape of the module's last output during the
	// sample forward pass, or nil when Summary could not observe it (see
	// Summary) or the module did not run.
	OutputShape []int
	Calls       int // how many times Forward ran
	// Params counts the module's own parameters' elements, not its
	// children's (theirs are in their rows).
	Params int
}

// Summary runs one forward pass of m on the sample input x and reports
// every module's output shape and parameter count, as torchinfo's
// summary or Keras's model.summary. x stays the caller's.
//
// The output shapes are observed by putting a recording module, for the
// length of the pass, in the slots through which containers call their
// children: Sequential's Modules, the registry of a module built on Base
// (seen when its Forward calls children through Children), and exported
// struct fields of interface type Module (such as
// TransformerEncoderBlock's Activation). A child that a Forward calls
// through a field of its own concrete type (b.Conv.Forward(x), the usual
// way a Base module is written) cannot be replaced by a recorder; its row
// has no output shape, while its parameters are counted all the same.
// Every slot is restored before Summary returns, panics included.
//
// The pass runs in evaluation mode, so that it updates no running
// statistics and draws no dropout masks, and each module's own mode is
// restored after. It does not use graph.NoGrad, whose switch is
// process-wide and would stop the recording of other goroutines' training
// steps; the output is released at once, which frees whatever the pass
// recorded. A misuse (a wrong input shape) is returned as the error, as
// is a device failure that the result carries when the pass ends (the
// CPU's, or an allocation's; a GPU reports a kernel's failures only at
// the next read, which Summary does not make).
func Summary(m Module, x *graph.Value) (*ModelSummary, error) {
	s := &ModelSummary{InputShape: x.Shape()}
	for _, p := range m.Parameters() {
		s.Params += p.Value.Len()
		s.ParamBytes += int64(p.Value.Len() * p.Value.DType().Size())
	}
	for _, b := range m.Buffers() {
		s.Buffers += b.Value.Len()
		s.BufferBytes += int64(b.Value.Len() * b.Value.DType().Size())
	}
	var modes []func()
	var walk func(m Module, path, name string, depth int)
	walk = func(m Module, path, name string, depth int) {
		training := m.Training()
		modes = append(modes, func() { m.SetTraining(training) })
		own := count(m.Parameters())
		at := len(s.Rows)
		s.Rows = append(s.Rows, SummaryRow{Path: path, Name: name, Type: TypeName(m), Depth: depth})
		if p, ok := m.(Parent); ok {
			for _, c := range p.Children() {
				own -= count(c.Module.Parameters())
				walk(c.Module, joinPath(path, c.Name), c.Name, depth+1)
			}
		}
		s.Rows[at].Params = own
	}
	walk(m, "", "", 0)
	rows := map[string]*SummaryRow{}
	for i := range s.Rows {
		rows[s.Rows[i].Path] = &s.Rows[i]
	}

	restore := install(m, "", rows)
	defer func() {
		restore()
		for _, r := range modes { // parents first, so each child ends in its own mode
			r()
		}
	}()
	m.SetTraining(false)
	var failed error
	if err := tensor.Catch(func() {
		y := m.Forward(x)
		defer y.Release()
		root := &s.Rows[0]
		root.OutputShape, root.Calls = y.Shape(), root.Calls+1
		if y.Tensor().Err() != nil {
			// Read, not Err, so that the failure counts as reported and
			// the device's next Sync does not return it again.
			_, failed = y.Float32s()
		}
	}); err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	return s, nil
}

func count(ns []Named) int {
	n := 0
	for _, p := range ns {
		n += p.Value.Len()
	}
	return n
}

// SummaryOfShape is Summary on a Float32 input of zeros of the given
// shape on dev, released after. A model whose input is indices
// (Embedding) needs Summary with an Int32 sample.
func SummaryOfShape(m Module, dev *tensor.Device, shape ...int) (*ModelSummary, error) {
	x := graph.Constant(tensor.Zeros(dev, shape...))
	defer x.Release()
	return Summary(m, x)
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// recorder stands in for a child during Summary's pass and notes the
// shape of what it returns.
type recorder struct {
	Module
	row *SummaryRow
}

func (r *recorder) Forward(x *graph.Value) *graph.Value {
	y := r.Module.Forward(x)
	r.row.OutputShape, r.row.Calls = y.Shape(), r.row.Calls+1
	return y
}

// install puts recorders into every slot of m's tree (m at path) that
// Summary sees into, and returns the function that puts the children
// back.
func install(m Module, path string, rows map[string]*SummaryRow) (restore func()) {
	var undo []func()
	wrap := func(child Module, name string) Module {
		row, ok := rows[joinPath(path, name)]
		if !ok {
			return child
		}
		return &recorder{Module: child, row: row}
	}
	var children []Child
	if p, ok := m.(Parent); ok {
		children = p.Children()
		for _, c := range children {
			undo = append(undo, install(c.Module, joinPath(path, c.Name), rows))
		}
	}
	switch c := m.(type) {
	case *Sequential:
		saved := c.Modules
		wrapped := make([]Module, len(saved))
		for i, child := range saved {
			wrapped[i] = wrap(child, strconv.Itoa(i))
		}
		c.Modules = wrapped
		undo = append(undo, func() { c.Modules = saved })
	case Composite:
		b := c.base()
		saved := b.entries
		wrapped := slices.Clone(saved)
		for i := range wrapped {
			if wrapped[i].child != nil {
				wrapped[i].child = wrap(wrapped[i].child, wrapped[i].name)
			}
		}
		b.entries = wrapped
		undo = append(undo, func() { b.entries = saved })
	}
	undo = append(undo, wrapFields(m, children, wrap)...)
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// wrapFields wraps the exported fields of interface type Module of the
// struct m points to, each under the name of the child it holds (a field
// that matches no child, or several, is left alone).
func wrapFields(m Module, children []Child, wrap func(Module, string) Module) []func() {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem()
	moduleType := reflect.TypeFor[Module]()
	var undo []func()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() || sf.Anonymous || f.Type() != moduleType || f.IsNil() {
			continue
		}
		saved := f.Interface().(Module)
		name, matches := "", 0
		for _, c := range children {
			if sameModule(c.Module, saved) {
				name, matches = c.Name, matches+1
			}
		}
		if matches != 1 {
			continue
		}
		f.Set(reflect.ValueOf(wrap(saved, name)))
		undo = append(undo, func() { f.Set(reflect.ValueOf(saved)) })
	}
	return undo
}

// sameModule compares without panicking on modules of incomparable types.
func sameModule(a, b Module) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// String prints the table.
func (s *ModelSummary) String() string { return formatSummary(s) }
