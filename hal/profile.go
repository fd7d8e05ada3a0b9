package hal

import "time"

// Profiler is the optional capability of a device that times the kernels
// it runs, for package profile (through tensor). A device without it is
// profiled on the host, per op, by the layer above.
//
// Profiling off must cost the device nothing: no query, no extra pass, no
// wait. Profiling on may change how work is submitted (a pass per kernel,
// a wait per kernel when only the host clock is available), so profiled
// times are per-kernel truths, not a model of the unprofiled run's total.
type Profiler interface {
	// StartProfile starts recording every kernel issued from now on.
	// Starting twice is ErrInvalid.
	StartProfile() error
	// StopProfile waits for the kernels issued so far, stops recording and
	// returns their times, in issue order. Stopping without a start is
	// ErrInvalid.
	StopProfile() (KernelProfile, error)
}

// ProfileClock says what measured a kernel's time.
type ProfileClock int

const (
	// ClockHost is wall time on the host: around the op's call on a
	// synchronous backend, or from submitting a kernel alone to its
	// completion on an asynchronous one (which includes the submission's
	// overhead).
	ClockHost ProfileClock = iota
	// ClockDevice is the device's own clock: WebGPU timestamp queries
	// written at the start and end of the kernel's compute pass.
	ClockDevice
)

func (c ProfileClock) String() string {
	if c == ClockDevice {
		return "device"
	}
	return "host"
}

// KernelProfile is what a Profiler recorded between StartProfile and
// StopProfile.
type KernelProfile struct {
	Clock ProfileClock
	// Note qualifies the clock for the reader, e.g. that the device
	// quantizes its timestamps.
	Note string
	// Origin is the host time that Start and End count from: StartProfile
	// for the host clock; for the device clock, the host time the first
	// profiled kernel was submitted (the device's clock has no fixed
	// relation to the host's, so this places the device timeline only
	// approximately next to host events).
	Origin  time.Time
	Kernels []KernelTime
}

// KernelTime is one kernel launch.
type KernelTime struct {
	Name       string        // the kernel's name in the backend's cache
	Start, End time.Duration // from KernelProfile.Origin
	Grid       [3]uint32     // workgroups dispatched (zero where not applicable)
}
