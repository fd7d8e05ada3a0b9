package tensor

import (
	"errors"
	"fmt"
)

// Error is the error type of this package. Misuse (mismatched shapes,
// tensors on different devices, use after Release) panics with an *Error;
// device failures are returned as an *Error that wraps the hal error, so
// errors.Is(err, hal.ErrOutOfMemory) and friends keep working.
type Error struct {
	Op  string // the operation, e.g. "MatMul"
	Msg string // what went wrong, naming shapes and devices
	Err error  // the underlying cause, if any
}

// ErrNotScalar is wrapped by the *Error that Item returns for a tensor
// that does not hold exactly one element.
var ErrNotScalar = errors.New("Item needs exactly one element (use Float32s or Float64s for more)")

func (e *Error) Error() string {
	s := "tensor: " + e.Op
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Catch runs f and returns the *Error it panicked with, or nil. Any other
// panic is not ours to swallow and propagates unchanged.
func Catch(f func()) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if e, ok := r.(*Error); ok {
			err = e
			return
		}
		panic(r)
	}()
	f()
	return nil
}

// misuse panics with an *Error; it is how every contract violation by the
// caller is reported.
func misuse(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}
