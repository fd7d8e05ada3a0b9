// Package schema is the JSON format that the benchmark program (go run
// ./bench), the peer script (bench/peers/peers.py) and the report (go run
// ./bench/report) share. One file holds one run: the machine and one
// result per case, implementation, device and thread count.
package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Version is the schema's version; Read refuses files of another one, so
// that a report never mixes incompatible runs silently.
const Version = 1

// Suite names the format in every file.
const Suite = "webtensor-bench"

// File is one run of the benchmark program or the peer script.
type File struct {
	Suite   string    `json:"suite"`
	Schema  int       `json:"schema"`
	Tool    string    `json:"tool"` // "webtensor" or "peers"
	Started time.Time `json:"started"`
	Args    []string  `json:"args,omitempty"`
	Machine Machine   `json:"machine"`
	Results []Result  `json:"results"`
}

// Machine describes where a run happened.
type Machine struct {
	CPU     string   `json:"cpu"`   // model name from /proc/cpuinfo
	Cores   int      `json:"cores"` // logical CPUs
	OS      string   `json:"os"`
	Arch    string   `json:"arch"`
	Go      string   `json:"go,omitempty"`
	Python  string   `json:"python,omitempty"`
	Torch   string   `json:"torch,omitempty"`
	NumPy   string   `json:"numpy,omitempty"`
	BLAS    string   `json:"blas,omitempty"`
	CUDA    string   `json:"cuda,omitempty"`
	GPU     string   `json:"gpu,omitempty"`
	Devices []Device `json:"devices,omitempty"`
}

// Device is one device a run measured.
type Device struct {
	Name    string `json:"name"`    // "cpu", "webgpu:0", "cuda"
	Adapter string `json:"adapter"` // e.g. "NVIDIA H100", "llvmpipe (LLVM 15…)"
	Backend string `json:"backend"` // "cpu", "vulkan", "opengles", "cuda"
	Type    string `json:"type"`    // "cpu", "discrete", "integrated", …
}

// Result is one case measured on one implementation, device and thread
// count. Median and Best are in Unit; the seconds are per iteration.
type Result struct {
	Case    string  `json:"case"`  // e.g. "matmul/1024"; the key that pairs implementations
	Group   string  `json:"group"` // e.g. "matmul": one chart series family
	Size    float64 `json:"size"`  // the x axis of the group's chart (matrix side, elements)
	Impl    string  `json:"impl"`  // "webtensor", "torch", "numpy"
	Device  string  `json:"device"`
	Adapter string  `json:"adapter,omitempty"`
	Backend string  `json:"backend,omitempty"`
	Type    string  `json:"adapter_type,omitempty"`
	Threads int     `json:"threads"`
	Variant string  `json:"variant,omitempty"` // how a peer ran it, e.g. "out=" (preallocated result)
	Unit    string  `json:"unit"`
	Median  float64 `json:"median"`
	Best    float64 `json:"best"`
	// MedianSeconds and BestSeconds are per iteration.
	MedianSeconds float64 `json:"median_s"`
	BestSeconds   float64 `json:"best_s"`
	Samples       int     `json:"samples"`
	Iters         int     `json:"iters"` // iterations per sample
	Error         string  `json:"error,omitempty"`
	// OfCopy is a GB/s median as a fraction of the median of the
	// device-to-device copy (copy/N) measured on the same device and
	// threads, of the same element count where there is one, else the
	// largest; 0 where none was measured.
	OfCopy float64 `json:"of_copy,omitempty"`
}

// Units. Throughputs are higher-better, times lower-better.
const (
	GFLOPS = "GFLOPS"
	GBs    = "GB/s"
	Ms     = "ms"
	UsOp   = "µs/op"
)

// HigherIsBetter reports whether a larger value of unit is faster.
func HigherIsBetter(unit string) bool { return unit == GFLOPS || unit == GBs }

// Speed is r's median as a higher-is-better number, so that the ratio of
// two speeds reads the same way for every unit: above 1, the first is
// faster.
func (r Result) Speed() float64 {
	if r.Error != "" || r.Median <= 0 {
		return 0
	}
	if HigherIsBetter(r.Unit) {
		return r.Median
	}
	return 1 / r.Median
}

// Value converts seconds per iteration to unit, given the work of one
// iteration: floating-point operations for GFLOPS, bytes for GB/s, the
// number of ops for µs/op; work is unused for ms.
func Value(unit string, work, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	switch unit {
	case GFLOPS, GBs:
		return work / seconds / 1e9
	case UsOp:
		return seconds * 1e6 / work
	default:
		return seconds * 1e3
	}
}

// Format writes a value for the tables of the benchmark program and the
// report: about three significant digits, without exponents in the usual
// range.
func Format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	case v >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Write stores f as indented JSON at path.
func Write(path string, f *File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Read loads a file written by Write or by peers.py.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Suite != Suite || f.Schema != Version {
		return nil, fmt.Errorf("%s: suite %q schema %d, want %q schema %d", path, f.Suite, f.Schema, Suite, Version)
	}
	return &f, nil
}
