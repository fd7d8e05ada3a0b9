package tensor

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// PrintOptions are the settings of a tensor's printed form, as PyTorch's
// torch.set_printoptions names them. Printing reads the tensor back from
// its device, so it waits for the work that computes it (it is a sync).
type PrintOptions struct {
	Precision int  // digits after the decimal point of floats
	Threshold int  // more elements than this are summarized with "..."
	EdgeItems int  // elements kept at each end of a summarized axis
	LineWidth int  // characters per line before a row wraps
	Shape     bool // append size=(…) as PyTorch does for empty tensors
	// Suffixes are appended after device and dtype, as PyTorch appends
	// requires_grad=True and grad_fn=<…> (package graph uses it).
	Suffixes []string
}

// DefaultPrintOptions are PyTorch's defaults.
var DefaultPrintOptions = PrintOptions{Precision: 4, Threshold: 1000, EdgeItems: 3, LineWidth: 80}

// Format implements fmt.Formatter, printing t as PyTorch's repr does:
//
//	tensor([[1.0000, 2.5000],
//	        [3.0000, 4.0000]])
//
// with one number format for all elements (fixed point, integers with a
// trailing "." when every value is whole, scientific notation when values
// span more than three decades), tensors of more than 1000 elements
// summarized to three items at each end of every axis, and device and
// dtype appended when they are not the CPU and float32 (dtype=int32 as
// torch.int32 prints). %v and %s print that; %+v appends the shape;
// a precision (%.2v) sets the decimals. Formatting reads t from its
// device (a sync); a failed or lost tensor prints <error: …> in place of
// its values and a released one <released>, so printing never panics.
// String, by contrast, stays a short description that reads nothing.
func (t *Tensor) Format(f fmt.State, verb rune) {
	if verb != 'v' && verb != 's' {
		fmt.Fprintf(f, "%%!%c(%s)", verb, t.String())
		return
	}
	o := DefaultPrintOptions
	if p, ok := f.Precision(); ok {
		o.Precision = p
	}
	o.Shape = f.Flag('+')
	io.WriteString(f, t.Repr(o))
}

// Repr returns t's printed form under o; see Format.
func (t *Tensor) Repr(o PrintOptions) string {
	const prefix = "tensor("
	if t == nil {
		return prefix + "<nil>)"
	}
	if t.released.Load() {
		return prefix + "<released>)"
	}
	var suffixes []string
	if t.dev.Name() != "cpu" {
		suffixes = append(suffixes, "device='"+t.dev.Name()+"'")
	}
	empty := t.Len() == 0
	if o.Shape || (empty && t.Rank() != 1) {
		suffixes = append(suffixes, "size="+shapeTuple(t.shape))
	}
	// As torch, int64 and bool are implied by their numbers unless there
	// are none.
	if implied := t.dtype.String() == "int64" || t.dtype.String() == "bool"; t.dtype != Float32 && (empty || !implied) {
		suffixes = append(suffixes, "dtype="+t.dtype.String())
	}
	suffixes = append(suffixes, o.Suffixes...)
	body := "[]"
	if !empty {
		body = t.body(o, len(prefix))
	}
	return addSuffixes(prefix+body, suffixes, len(prefix), o.LineWidth)
}

// shapeTuple writes a shape as a Python tuple, as torch.Size prints.
func shapeTuple(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// body prints t's elements, or an error marker when they cannot be read.
func (t *Tensor) body(o PrintOptions, indent int) (s string) {
	// Printing must not panic: a lost device or a misuse while summarizing
	// becomes the marker too.
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("<error: %v>", r)
		}
	}()
	summarize := t.Len() > o.Threshold
	src := t
	if summarize {
		src = t.edges(o.EdgeItems)
		defer src.Release()
	}
	vals, err := src.Float64s()
	if err != nil {
		return "<error: " + err.Error() + ">"
	}
	p := printer{o: o, f: newNumberFormat(vals, t.dtype.IsFloat(), o.Precision), vals: vals, shape: t.shape, summarize: summarize}
	str, _ := p.tensor(0, 0, indent)
	return str
}

// edges returns the elements that a summarized t shows: the first and last
// edge items of every axis longer than 2·edge (what torch's
// get_summarized_data keeps), so that only those cross to the host.
func (t *Tensor) edges(edge int) *Tensor {
	cur := t.alias()
	for d, n := range t.shape {
		if n <= 2*edge {
			continue
		}
		head, tail := cur.Slice(d, 0, edge, 1), cur.Slice(d, n-edge, n, 1)
		next := concat("Concat", d, []*Tensor{head, tail})
		head.Release()
		tail.Release()
		cur.Release()
		cur = next
	}
	return cur
}

// printer lays out the summarized values (row-major over the summarized
// shape) as torch's _tensor_str_with_formatter does.
type printer struct {
	o         PrintOptions
	f         numberFormat
	vals      []float64
	shape     []int // the full shape
	summarize bool
}

// elided reports whether axis d is printed as edge items around "...".
func (p *printer) elided(d int) bool { return p.summarize && p.shape[d] > 2*p.o.EdgeItems }

// kept is how many items of axis d are in vals.
func (p *printer) kept(d int) int {
	if p.elided(d) {
		return 2 * p.o.EdgeItems
	}
	return p.shape[d]
}

// tensor prints the sub-tensor of axis d on that starts at vals[at], and
// returns how many values it consumed.
func (p *printer) tensor(d, at, indent int) (string, int) {
	rank := len(p.shape)
	if rank == 0 {
		return p.f.format(p.vals[0]), 1
	}
	if d == rank-1 {
		return p.vector(d, at, indent)
	}
	var items []string
	used := 0
	for i := range p.kept(d) {
		if p.elided(d) && i == p.o.EdgeItems {
			items = append(items, "...")
		}
		s, n := p.tensor(d+1, at+used, indent+1)
		items = append(items, s)
		used += n
	}
	sep := "," + strings.Repeat("\n", rank-d-1) + strings.Repeat(" ", indent+1)
	return "[" + strings.Join(items, sep) + "]", used
}

func (p *printer) vector(d, at, indent int) (string, int) {
	n := p.kept(d)
	var items []string
	for i := range n {
		if p.elided(d) && i == p.o.EdgeItems {
			items = append(items, " ...")
		}
		items = append(items, p.f.format(p.vals[at+i]))
	}
	perLine := max(1, (p.o.LineWidth-indent)/(p.f.width+2))
	var lines []string
	for i := 0; i < len(items); i += perLine {
		lines = append(lines, strings.Join(items[i:min(i+perLine, len(items))], ", "))
	}
	return "[" + strings.Join(lines, ",\n"+strings.Repeat(" ", indent+1)) + "]", n
}

// addSuffixes closes the repr with its suffixes, wrapping before one that
// would pass the line width (torch's _add_suffixes).
func addSuffixes(s string, suffixes []string, indent, lineWidth int) string {
	var b strings.Builder
	b.WriteString(s)
	lastLine := len(s) - strings.LastIndex(s, "\n") + 1
	for _, suf := range suffixes {
		if lastLine+len(suf)+2 > lineWidth {
			b.WriteString(",\n" + strings.Repeat(" ", indent) + suf)
			lastLine = indent + len(suf)
		} else {
			b.WriteString(", " + suf)
			lastLine += len(suf) + 2
		}
	}
	b.WriteString(")")
	return b.String()
}

// numberFormat is one format for every element of a tensor, chosen from
// its (summarized) values as torch's _Formatter chooses it.
type numberFormat struct {
	float     bool
	intMode   bool // floats that are all whole: "3." instead of "3.0000"
	sci       bool
	precision int
	width     int
}

func newNumberFormat(vals []float64, float bool, precision int) numberFormat {
	f := numberFormat{float: float, intMode: true, precision: precision, width: 1}
	if !float {
		for _, v := range vals {
			f.width = max(f.width, len(strconv.FormatFloat(v, 'f', -1, 64)))
		}
		return f
	}
	lo, hi := math.Inf(1), 0.0
	var finite []float64
	for _, v := range vals {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		finite = append(finite, v)
		lo, hi = min(lo, math.Abs(v)), max(hi, math.Abs(v))
		if v != math.Ceil(v) {
			f.intMode = false
		}
	}
	if len(finite) == 0 {
		return f
	}
	wide := hi/lo > 1000 || hi > 1e8
	switch {
	case f.intMode && wide, !f.intMode && (wide || lo < 1e-4):
		f.sci = true
		for _, v := range finite {
			f.width = max(f.width, len(strconv.FormatFloat(v, 'e', precision, 64)))
		}
	case f.intMode:
		for _, v := range finite {
			f.width = max(f.width, len(strconv.FormatFloat(v, 'f', 0, 64))+1)
		}
	default:
		for _, v := range finite {
			f.width = max(f.width, len(strconv.FormatFloat(v, 'f', precision, 64)))
		}
	}
	return f
}

// format writes v right-aligned to the common width, with Python's
// spelling of the non-finite values.
func (f numberFormat) format(v float64) string {
	var s string
	switch {
	case !f.float:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case math.IsNaN(v):
		s = "nan"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case f.sci:
		s = strconv.FormatFloat(v, 'e', f.precision, 64)
	case f.intMode:
		s = strconv.FormatFloat(v, 'f', 0, 64) + "."
	default:
		s = strconv.FormatFloat(v, 'f', f.precision, 64)
	}
	if pad := f.width - len(s); pad > 0 {
		s = strings.Repeat(" ", pad) + s
	}
	return s
}
