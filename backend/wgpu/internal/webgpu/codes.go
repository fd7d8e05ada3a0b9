package webgpu

import "fmt"

// Code classifies a failure reported by the library.
type Code int

// Failure codes.
const (
	Validation  Code = 1
	OutOfMemory Code = 2
	Internal    Code = 3
	Lost        Code = 4
	NoAdapter   Code = 5
	MapFailed   Code = 6
)

func (c Code) String() string {
	switch c {
	case Validation:
		return "validation error"
	case OutOfMemory:
		return "out of memory"
	case Internal:
		return "internal error"
	case Lost:
		return "device lost"
	case NoAdapter:
		return "no adapter"
	case MapFailed:
		return "buffer mapping failed"
	}
	return fmt.Sprintf("error %d", int(c))
}

// Error is a failure reported by the WebGPU implementation.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}
