package nn

import (
	"reflect"
	"strconv"
	"strings"
)

// ExtraRepr is implemented by a module whose printed form has arguments,
// as PyTorch's extra_repr: Linear's is "in_features=784,
// out_features=512, bias=True". A new layer adds this method (and a
// String method that returns Format of itself); Format does the rest.
type ExtraRepr interface {
	ExtraRepr() string
}

// Parent is implemented by a module with named children, which Format
// prints nested and Summary sees into. Base implements it from what was
// registered; Sequential names its modules by position.
type Parent interface {
	Children() []Child
}

// TypeNamer overrides the type name that Format prints (the Go type's
// name otherwise): BatchNorm prints as BatchNorm1d or BatchNorm2d.
type TypeNamer interface {
	TypeName() string
}

// Format returns m's structure as PyTorch prints a module: its type name,
// its ExtraRepr in parentheses, and each child on its own line, indented,
// as "(name): " and the child's own Format:
//
//	Sequential(
//	  (0): Linear(in_features=784, out_features=512, bias=True)
//	  (1): ReLU()
//	)
//
// Every layer of this package has a String method that returns Format
// of itself, so fmt's %v prints it; a module built on Base gets one from
// Base.
func Format(m Module) string {
	var lines []string
	if e, ok := m.(ExtraRepr); ok {
		if s := e.ExtraRepr(); s != "" {
			lines = strings.Split(s, "\n")
		}
	}
	extra := len(lines)
	if p, ok := m.(Parent); ok {
		for _, c := range p.Children() {
			lines = append(lines, "("+c.Name+"): "+indentTail(Format(c.Module), 2))
		}
	}
	s := TypeName(m) + "("
	switch {
	case len(lines) == 1 && extra == 1:
		s += lines[0]
	case len(lines) > 0:
		s += "\n  " + strings.Join(lines, "\n  ") + "\n"
	}
	return s + ")"
}

// TypeName is the name Format prints for m: its TypeName method's, or its
// Go type's name without package and pointer.
func TypeName(m Module) string {
	if n, ok := m.(TypeNamer); ok {
		return n.TypeName()
	}
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// indentTail indents every line of s but the first, as torch's _addindent.
func indentTail(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

// pyBool and pyFloat write values as Python's str does, so that
// ExtraRepr reads as PyTorch's.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyOptionalFloat writes a float argument that PyTorch allows to be None
// (BatchNorm's momentum): nil is "None".
func pyOptionalFloat(v *float64) string {
	if v == nil {
		return "None"
	}
	return pyFloat(*v)
}

func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0" // Python writes 1.0, Go 1
	}
	return s
}

// pyPair writes a 2-D size as PyTorch's layers echo it: a tuple.
func pyPair(p [2]int) string {
	return "(" + strconv.Itoa(p[0]) + ", " + strconv.Itoa(p[1]) + ")"
}

// pyIntOrPair writes an int when both sides agree, as a pool given one
// int echoes it, and a tuple otherwise.
func pyIntOrPair(p [2]int) string {
	if p[0] == p[1] {
		return strconv.Itoa(p[0])
	}
	return pyPair(p)
}
