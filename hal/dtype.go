package hal

import "fmt"

// DType is the element type of a view.
type DType uint8

// Element types. Float16 is IEEE binary16; Int32 holds indices, labels and
// masks (comparisons write Int32 0/1 masks, the mask type of the module);
// Int64 is PyTorch's long, for indices and counters read from or written to
// PyTorch files (a backend that cannot hold it leaves it out of its
// Capabilities).
const (
	Float32 DType = iota
	Float64
	Int32
	Float16
	Int64
	numDTypes
)

// DTypes lists every dtype, in a stable order.
var DTypes = []DType{Float32, Float64, Int32, Float16, Int64}

// Size is the number of bytes of one element.
func (t DType) Size() int {
	switch t {
	case Float64, Int64:
		return 8
	case Float16:
		return 2
	}
	return 4
}

// IsFloat reports whether t is a floating-point type.
func (t DType) IsFloat() bool { return !t.IsInteger() }

// IsInteger reports whether t is an integer type (Int32 or Int64).
func (t DType) IsInteger() bool { return t == Int32 || t == Int64 }

// Valid reports whether t is one of the dtypes above.
func (t DType) Valid() bool { return t < numDTypes }

func (t DType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Float16:
		return "float16"
	}
	return fmt.Sprintf("DType(%d)", int(t))
}

// DTypeSet is a set of dtypes.
type DTypeSet uint8

// SetOf returns the set of the given dtypes.
func SetOf(ts ...DType) DTypeSet {
	var s DTypeSet
	for _, t := range ts {
		s |= 1 << t
	}
	return s
}

// Has reports whether t is in s.
func (s DTypeSet) Has(t DType) bool { return t < numDTypes && s&(1<<t) != 0 }

// List returns the members of s in the order of DTypes.
func (s DTypeSet) List() []DType {
	var out []DType
	for _, t := range DTypes {
		if s.Has(t) {
			out = append(out, t)
		}
	}
	return out
}
