package tensor

import "github.com/webtensor/webtensor/hal"

// Optimizer names a fused parameter update; see hal.Optimizer for each
// rule's arithmetic and state.
type Optimizer = hal.Optimizer

// The fused updates.
const (
	SGD     = hal.SGD
	Adam    = hal.Adam
	RMSProp = hal.RMSProp
	Adagrad = hal.Adagrad
)

// StepArgs are one step's hyperparameters; see hal.StepArgs.
type StepArgs = hal.StepArgs

// Step updates param in place by one step of op, reading grad (times
// scale's single element when scale is not nil) and reading and writing
// the state tensors, in one kernel on param's device: no host round trip.
// This is the one tensor operation that writes into its operands, so
// param and state must be contiguous tensors that are not views of
// anything else. (Being written.)
func Step(op Optimizer, param, grad *Tensor, state []*Tensor, scale *Tensor, a StepArgs) {
	misuse("Step", "not implemented yet")
}
