// Package adapters decides which WebGPU adapters the tests run on. It
// knows nothing of the tensor package, so that every test that needs the
// decision can share it: internal/testdevice (tests above the tensor
// package), the tensor package's own tests (which internal/testdevice
// cannot serve: it imports tensor) and backend/wgpu's tests (below
// tensor).
//
// By default the tests run on every adapter, once each. The environment
// variable WEBTENSOR_TEST_ADAPTERS, a comma-separated list of adapter
// indices and graphics APIs (e.g. "0", "vulkan", "1,metal"), restricts them
// to the adapters it names: for quick local runs, and on GPU machines,
// where the software adapters are slow or absent.
//
// Under CI=true a missing adapter fails the tests instead of skipping
// them. On linux/amd64 without WEBTENSOR_TEST_ADAPTERS, CI needs both
// software adapters that `make deps` installs: lavapipe through Vulkan and
// llvmpipe through OpenGL ES (adapters of type "cpu"), unless the machine
// has a GPU (an adapter of another type), which the tests then run on
// along with whichever software adapters there are. With
// WEBTENSOR_TEST_ADAPTERS set, CI needs an adapter for each of its entries
// instead. Elsewhere CI needs at least one adapter.
package adapters

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/hal"
)

// Env names the environment variable that restricts the adapters tests
// run on.
const Env = "WEBTENSOR_TEST_ADAPTERS"

// CI reports whether the tests run in CI (CI=true), where a missing
// adapter is a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// Adapter is one WebGPU adapter the tests run on.
type Adapter struct {
	Index int // N of "webgpu:N", the index backend/wgpu's Open takes
	Info  hal.Info
}

// Device is the name tensor.Open takes for the adapter: "webgpu:N".
func (a Adapter) Device() string { return "webgpu:" + strconv.Itoa(a.Index) }

// Name names the subtest that runs on the adapter: its device name and its
// graphics API, e.g. "webgpu:0-vulkan". The adapter's own name would not
// do: Mesa's software adapters both call themselves "llvmpipe (…)".
func (a Adapter) Name() string { return a.Device() + "-" + a.Info.Backend }

// Selection is the adapters tests run on, and what they lack.
type Selection struct {
	Adapters []Adapter
	// Missing says which adapters the tests need and do not have, and why;
	// nil when nothing is missing.
	Missing error
	// Required reports that Missing fails the tests (CI=true) instead of
	// skipping them.
	Required bool
}

// Select picks the adapters to run on from infos, every WebGPU adapter in
// index order, and listErr, why the backend listed none (nil if it did),
// following WEBTENSOR_TEST_ADAPTERS and CI.
func Select(infos []hal.Info, listErr error) Selection {
	return selectFrom(infos, listErr, os.Getenv(Env), CI(), runtime.GOOS+"/"+runtime.GOARCH)
}

// selectFrom is Select with its environment as arguments.
func selectFrom(infos []hal.Info, listErr error, filter string, ci bool, platform string) Selection {
	all := make([]Adapter, len(infos))
	for i, info := range infos {
		all[i] = Adapter{Index: i, Info: info}
	}
	s := Selection{Required: ci}
	var missing []string
	if strings.TrimSpace(filter) == "" {
		s.Adapters = all
		hardware := slices.ContainsFunc(all, func(a Adapter) bool { return a.Info.Type != hal.AdapterCPU })
		if ci && platform == "linux/amd64" && !hardware {
			// What `make deps` installs: CI checks every kernel on both
			// of Dawn's paths, Vulkan (core, f16, subgroups) and OpenGL ES
			// (compatibility level).
			for _, backend := range []string{"vulkan", "opengles"} {
				if !slices.ContainsFunc(all, func(a Adapter) bool { return isSoftware(a, backend) }) {
					missing = append(missing, fmt.Sprintf("no %s adapter of type cpu", backend))
				}
			}
		}
	} else {
		for _, entry := range strings.Split(filter, ",") {
			entry = strings.TrimSpace(entry)
			matched := false
			for _, a := range all {
				if matches(a, entry) {
					matched = true
					if !slices.ContainsFunc(s.Adapters, func(b Adapter) bool { return b.Index == a.Index }) {
						s.Adapters = append(s.Adapters, a)
					}
				}
			}
			if !matched {
				missing = append(missing, fmt.Sprintf("no adapter matches %q of %s=%q", entry, Env, filter))
			}
		}
		slices.SortFunc(s.Adapters, func(a, b Adapter) int { return a.Index - b.Index })
	}
	if len(s.Adapters) == 0 && len(missing) == 0 {
		missing = append(missing, "no WebGPU adapter")
	}
	if len(missing) == 0 {
		return s
	}
	msg := strings.Join(missing, "; ")
	if len(infos) > 0 {
		have := make([]string, len(all))
		for i, a := range all {
			have[i] = fmt.Sprintf("%s (%s, %s)", a.Name(), a.Info.Name, a.Info.Type)
		}
		msg += "; adapters present: " + strings.Join(have, ", ")
	}
	msg += "; run `make deps` to install Dawn, lavapipe and Mesa's OpenGL ES driver, or set " + Env + " to the adapters this machine has"
	if listErr != nil {
		s.Missing = fmt.Errorf("%s: %w", msg, listErr)
	} else {
		s.Missing = errors.New(msg)
	}
	return s
}

// isSoftware reports whether a is a software adapter on the given graphics
// API.
func isSoftware(a Adapter, backend string) bool {
	return a.Info.Backend == backend && a.Info.Type == hal.AdapterCPU
}

// matches reports whether entry of WEBTENSOR_TEST_ADAPTERS names a: its
// index, or its graphics API in any case.
func matches(a Adapter, entry string) bool {
	if i, err := strconv.Atoi(entry); err == nil {
		return i == a.Index
	}
	return strings.EqualFold(entry, a.Info.Backend)
}

// Run runs f as one subtest per selected adapter, named by Adapter.Name.
// When adapters are missing it then runs one more subtest, "webgpu", that
// fails under CI and is skipped elsewhere, saying what is missing.
func (s Selection) Run(t *testing.T, f func(t *testing.T, a Adapter)) {
	t.Helper()
	for _, a := range s.Adapters {
		t.Run(a.Name(), func(t *testing.T) { f(t, a) })
	}
	if s.Missing != nil {
		t.Run("webgpu", func(t *testing.T) { s.report(t) })
	}
}

// First returns the first selected adapter, for tests and benchmarks that
// need a single one. When adapters are missing it fails t under CI (even
// if the first is there: CI is then set up wrong), and without any it
// skips t elsewhere.
func (s Selection) First(t testing.TB) Adapter {
	t.Helper()
	if s.Missing != nil && (s.Required || len(s.Adapters) == 0) {
		s.report(t)
	}
	return s.Adapters[0]
}

// report ends t with what is missing: a failure under CI, else a skip.
func (s Selection) report(t testing.TB) {
	t.Helper()
	if s.Required {
		t.Fatalf("CI=true requires WebGPU adapters: %v", s.Missing)
	}
	t.Skipf("skipped: %v", s.Missing)
}
