package placement

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/webtensor/webtensor/hal"
)

// Never is the threshold of a family in which the GPU never beats the CPU:
// no size reaches it. A software adapter (llvmpipe) has it everywhere.
const Never int64 = -1

// Thresholds are the sizes from which an op of each family runs faster on
// an accelerator than on the CPU backend, counting the upload of host
// operands and the read-back of the result as a user with host data pays
// them. An op is routed to the accelerator when its size is at least its
// family's threshold; Never (-1) means never. cmd/calibrate measures them.
type Thresholds struct {
	Elementwise int64 `json:"elementwise"` // output elements
	Reduction   int64 `json:"reduction"`   // input elements
	MatMul      int64 `json:"matmul"`      // multiply-adds (conv: of the implicit GEMM)
	Window      int64 `json:"window"`      // output elements × window area (pooling, sampling)
	Creation    int64 `json:"creation"`    // elements of host data (FromFloat32, …)
}

// Family groups ops whose CPU/GPU crossover has one size measure; each has
// its own threshold.
type Family int

const (
	Elementwise Family = iota // output elements
	Reduction                 // input elements
	MatMul                    // multiply-adds
	Window                    // output elements × window area
	Creation                  // elements of new host data
)

// Reached reports whether an op of family fam and size runs on the
// accelerator.
func (t Thresholds) Reached(fam Family, size int64) bool {
	var thr int64
	switch fam {
	case Elementwise:
		thr = t.Elementwise
	case Reduction:
		thr = t.Reduction
	case MatMul:
		thr = t.MatMul
	case Window:
		thr = t.Window
	case Creation:
		thr = t.Creation
	}
	return thr >= 0 && size >= thr
}

// NeverThresholds keeps every op on the CPU.
var NeverThresholds = Thresholds{Never, Never, Never, Never, Never}

// DefaultThresholds are the thresholds of an uncalibrated adapter by type.
// A software adapter never wins: it runs on the same cores as the CPU
// backend, behind a shader compiler and a driver. For a real GPU they are
// conservative, so that Auto never makes a program slower than the CPU:
//   - elementwise and reductions from 2¹⁸ elements (1 MiB of float32): a
//     GPU dispatch plus a read-back costs ~50-200 µs through WebGPU, which
//     is what the CPU backend needs for about that many elements at a few
//     GB/s, and uploading host data over PCIe (~10 GB/s) adds ~100 µs;
//   - matmul from 2²⁴ multiply-adds (256³): the CPU backend's packed GEMM
//     does that in ~0.3 ms at ~100 GFLOPS, about the fixed cost of a GPU
//     round trip, while GPU GEMM is 10-100× faster beyond;
//   - window ops from 2²⁰: they do several reads per output element;
//   - creation from 2¹⁶ elements: smaller host data is usually a bias,
//     a scalar or a label batch, which small CPU ops consume.
func DefaultThresholds(t hal.AdapterType) Thresholds {
	switch t {
	case hal.AdapterDiscrete, hal.AdapterIntegrated:
		return Thresholds{Elementwise: 1 << 18, Reduction: 1 << 18, MatMul: 1 << 24, Window: 1 << 20, Creation: 1 << 16}
	}
	// Default never picks unknown adapters either: they may be software.
	return NeverThresholds
}

// ThresholdsFile is the JSON of thresholds.json: thresholds by adapter
// key ([AdapterKey]: name and graphics API), as cmd/calibrate writes them.
type ThresholdsFile struct {
	Version  int                   `json:"version"`
	Adapters map[string]Thresholds `json:"adapters"`
	// Notes says, per adapter, how the thresholds were found (for people).
	Notes map[string]string `json:"notes,omitempty"`
}

// ThresholdsFileVersion is the Version that ReadThresholdsFile accepts.
const ThresholdsFileVersion = 1

// ReadThresholdsFile parses a thresholds file.
func ReadThresholdsFile(path string) (ThresholdsFile, error) {
	var f ThresholdsFile
	raw, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("thresholds file %s: %w", path, err)
	}
	if f.Version != ThresholdsFileVersion {
		return f, fmt.Errorf("thresholds file %s: version %d, want %d", path, f.Version, ThresholdsFileVersion)
	}
	for name, t := range f.Adapters {
		for _, v := range []int64{t.Elementwise, t.Reduction, t.MatMul, t.Window, t.Creation} {
			if v < Never {
				return f, fmt.Errorf("thresholds file %s: adapter %q: threshold %d (want ≥ 0, or -1 for never)", path, name, v)
			}
		}
	}
	return f, nil
}

// Write writes f as indented JSON, creating the directory.
func (f ThresholdsFile) Write(path string) error {
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// DefaultThresholdsPath is where thresholds load from at start-up:
// os.UserConfigDir()/webtensor/thresholds.json.
func DefaultThresholdsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "webtensor", "thresholds.json"), nil
}

var thresholds struct {
	sync.Mutex
	override *Thresholds
	byName   map[string]Thresholds
}

// loadDefaultThresholds reads the user's thresholds file once, before the
// first lookup. A missing file is the normal case; a broken one must not
// stop a program, so it is logged and ignored.
var loadDefaultThresholds = sync.OnceFunc(func() {
	path, err := DefaultThresholdsPath()
	if err != nil {
		return
	}
	f, err := ReadThresholdsFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		log.Printf("webtensor: ignoring thresholds: %v", err)
		return
	}
	thresholds.Lock()
	defer thresholds.Unlock()
	if thresholds.byName == nil {
		thresholds.byName = f.Adapters
	}
})

// LoadThresholds replaces the per-adapter thresholds with those of a file
// that cmd/calibrate wrote. On error nothing changes.
func LoadThresholds(path string) error {
	loadDefaultThresholds()
	f, err := ReadThresholdsFile(path)
	if err != nil {
		return err
	}
	thresholds.Lock()
	defer thresholds.Unlock()
	thresholds.byName = f.Adapters
	if thresholds.byName == nil {
		thresholds.byName = map[string]Thresholds{}
	}
	return nil
}

// SetThresholds makes t the thresholds of every accelerator, over any file
// and the defaults, until ResetThresholds.
func SetThresholds(t Thresholds) {
	thresholds.Lock()
	defer thresholds.Unlock()
	thresholds.override = &t
}

// ResetThresholds drops what SetThresholds set.
func ResetThresholds() {
	thresholds.Lock()
	defer thresholds.Unlock()
	thresholds.override = nil
}

// ThresholdsFor returns the thresholds in force for an accelerator, which
// info describes: those of SetThresholds, else the loaded file's entry for
// its AdapterKey, else DefaultThresholds for its adapter type.
func ThresholdsFor(info hal.Info) Thresholds {
	loadDefaultThresholds()
	thresholds.Lock()
	defer thresholds.Unlock()
	if thresholds.override != nil {
		return *thresholds.override
	}
	if t, ok := thresholds.byName[AdapterKey(info)]; ok {
		return t
	}
	if t, ok := thresholds.byName[info.Name]; ok {
		return t // a file written before keys named the graphics API
	}
	return DefaultThresholds(info.Type)
}

// AdapterKey names an adapter wherever adapters are keyed (thresholds
// files, caches): its name and graphics API, as "llvmpipe (LLVM 15.0.6,
// 256 bits) [vulkan]". The name alone does not tell adapters apart: Mesa's
// lavapipe (Vulkan) and llvmpipe (OpenGL ES) give the same one.
func AdapterKey(info hal.Info) string {
	if info.Backend == "" {
		return info.Name
	}
	return info.Name + " [" + info.Backend + "]"
}
