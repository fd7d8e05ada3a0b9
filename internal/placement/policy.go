// Package placement decides which device each op runs on and moves its
// operands there, and reruns an op on the CPU when it ran out of GPU
// memory: the runtime policy behind tensor.SetPlacement. The policies
// themselves are documented on tensor.Placement, which is [Policy].
//
// # Where it sits
//
// The package sits below tensor and does not import it, so that tensor can
// import it: the policy is then in force in every program that uses
// tensor, WEBTENSOR_PLACEMENT included, with no import of its own, and
// tensor's public placement API (SetPlacement, Thresholds, PlacementStats,
// …) stays where users find it, as aliases and forwarders in
// tensor/placement.go. The package works on tensor's types through type
// parameters: a [Router] is generic over the device and tensor types, and
// what it needs that their public methods do not give (the CPU device, the
// misuse panics, a device's dtypes, a tensor's recorded failure, retracting
// a device's recorded failures) comes from the [Host] that tensor gives it.
//
// # One routing point
//
// Placement happens once per public op, at its entry, in one call that
// tensor's op entries make (tensor's routed, which calls [Router.Routed]):
// it places the operands, runs the op's body where they now are and, when
// the body ran out of GPU memory and the policy allows, reruns it on the
// CPU. The body of a composite op calls tensor's unplaced kernels, never
// the public ops, so it runs whole on the device its entry chose. No
// other code of tensor reaches placement.
package placement

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync/atomic"
)

// Policy is the process-wide placement policy: tensor.Placement, where
// each policy is documented.
type Policy int

// The policies; see tensor.Placement.
const (
	Explicit Policy = iota
	Auto
	ForceGPU
	ForceCPU
	MinimizeTransfers
)

var policyNames = [...]string{"Explicit", "Auto", "ForceGPU", "ForceCPU", "MinimizeTransfers"}

func (p Policy) String() string {
	if p.Valid() {
		return policyNames[p]
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Valid reports whether p is one of the policies.
func (p Policy) Valid() bool { return p >= Explicit && p <= MinimizeTransfers }

// Env is the environment variable that sets the policy at start-up; see
// tensor.EnvPlacement.
const Env = "WEBTENSOR_PLACEMENT"

// Parse returns the policy that s names, as Env takes it: case, '-' and
// '_' do not matter.
func Parse(s string) (Policy, error) {
	key := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	for i, name := range policyNames {
		if key == strings.ToLower(name) {
			return Policy(i), nil
		}
	}
	return Explicit, fmt.Errorf("unknown placement %q (want explicit, auto, force-gpu, force-cpu or minimize-transfers)", s)
}

// policy holds the Policy in force. It is set from Env by its initializer
// rather than by an init function, so that package-level variables that
// read the policy (in tests, what the process started with) see it.
var policy = func() *atomic.Int32 {
	p := new(atomic.Int32)
	p.Store(int32(fromEnv()))
	return p
}()

// fromEnv is the policy that Env names, else Explicit.
func fromEnv() Policy {
	value, set := os.LookupEnv(Env)
	if !set || value == "" {
		return Explicit
	}
	p, err := Parse(value)
	if err != nil {
		// A typo must not stop a program that would run under the
		// default; it is reported, as a broken thresholds file is.
		log.Printf("webtensor: ignoring %s: %v", Env, err)
		return Explicit
	}
	return p
}

// Set sets the policy in force and returns the previous one. p must be
// Valid.
func Set(p Policy) Policy { return Policy(policy.Swap(int32(p))) }

// Current returns the policy in force.
func Current() Policy { return Policy(policy.Load()) }
