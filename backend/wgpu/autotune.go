//go:build cgo || (js && wasm)

package wgpu

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webtensor/webtensor/hal"
)

// Autotune: MatMul variants timed on the adapter itself, per shape class,
// remembered in <cache dir>/webtensor/autotune/<adapter key>.json. The
// table is read on a device's first MatMul. When tuning is on, a MatMul
// whose class has no entry tunes it first: a handful of candidates, each
// compiled and run a few times at that size, so the first MatMul of a new
// class takes milliseconds to a second longer; the choice is saved, and
// later processes on the same adapter only read it. AutotuneMatMul tunes
// a class on demand.
//
// Tuning is on by default on hardware adapters, where the best tile
// depends on the GPU (its compute units, which WebGPU does not expose),
// and off on software adapters (llvmpipe, lavapipe: the heuristic was
// measured there) and in tests (testing.Testing), whose results must not
// depend on timing; benchmarks and programs on GPUs, under CI too, tune. WEBTENSOR_AUTOTUNE=1 turns it on
// everywhere, WEBTENSOR_AUTOTUNE=0 off everywhere; a saved choice is used
// either way unless tuning is off by WEBTENSOR_AUTOTUNE=0.

// autotuneEnv turns tuning of unseen shape classes during MatMul on ("1")
// or off ("0"); unset, it is on for hardware adapters outside tests.
const autotuneEnv = "WEBTENSOR_AUTOTUNE"

// autotuneDirEnv overrides the cache directory (tests use a temporary one).
const autotuneDirEnv = "WEBTENSOR_AUTOTUNE_DIR"

// autotuneFile is the on-disk form of one adapter's table.
type autotuneFile struct {
	Adapter string `json:"adapter"`
	// Candidates is the autotuneCandidates the choices were made among.
	Candidates int                     `json:"candidates,omitempty"`
	Choices    map[string]matmulConfig `json:"choices"`
}

// autotuneCandidates numbers the candidate lists: a table tuned among an
// older list is dropped and its classes tuned again, so that new variants
// (2: the two-stage and swizzled tiles; 3: the warp-tiled ones) are tried
// on adapters that tuned before them, and choices made by an older way of
// timing are made again (4: about autotuneFlops per timing and the
// candidates timed in rounds, where one short product per timing was
// noisier than the spread between tiles).
const autotuneCandidates = 4

// autotuneTable is one adapter's choices.
type autotuneTable struct {
	mu      sync.Mutex
	path    string
	adapter string
	choices map[string]matmulConfig
}

// autotuneTables holds the table of each adapter key, loaded once.
var autotuneTables sync.Map

// adapterKey names an adapter in file names: its name, made safe, and a
// hash of everything that identifies it.
func adapterKey(info hal.Info) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%s|%s|%s|%v", info.Name, info.Vendor, info.Architecture, info.Driver, info.Backend, info.Type)
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, info.Name)
	if len(safe) > 40 {
		safe = safe[:40]
	}
	return fmt.Sprintf("%s-%016x", safe, h.Sum64())
}

// autotuneDir is where tables live.
func autotuneDir() (string, error) {
	if dir := os.Getenv(autotuneDirEnv); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "webtensor", "autotune"), nil
}

// autotuneTable returns d's table, reading it from disk on first use. A
// missing, unreadable or corrupt file gives an empty table: tuning is an
// optimisation, never a reason to fail.
func (d *Device) autotuneTable() *autotuneTable {
	key := adapterKey(d.info)
	if t, ok := autotuneTables.Load(key); ok {
		return t.(*autotuneTable)
	}
	t := &autotuneTable{adapter: key, choices: map[string]matmulConfig{}}
	if dir, err := autotuneDir(); err == nil {
		t.path = filepath.Join(dir, key+".json")
		var f autotuneFile
		if data, err := os.ReadFile(t.path); err == nil && json.Unmarshal(data, &f) == nil && f.Candidates == autotuneCandidates {
			for class, c := range f.Choices {
				if c.Kind == matmulClassic || c.Kind == matmulTiled && d.fits(c) {
					t.choices[class] = c
				}
			}
		}
	}
	actual, _ := autotuneTables.LoadOrStore(key, t)
	return actual.(*autotuneTable)
}

// save writes the table, atomically through a rename.
func (t *autotuneTable) save() error {
	if t.path == "" {
		return fmt.Errorf("webgpu: autotune: no cache directory")
	}
	t.mu.Lock()
	data, err := json.MarshalIndent(autotuneFile{Adapter: t.adapter, Candidates: autotuneCandidates, Choices: t.choices}, "", "  ")
	t.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}

// shapeClass buckets a product by dtype, batched or not, and the
// power-of-two ceilings of M, N and K.
func shapeClass(dt hal.DType, batched bool, m, k, n int) string {
	lg := func(x int) int { return bits.Len(uint(max(x, 1) - 1)) }
	return fmt.Sprintf("%v/b%v/m%d/n%d/k%d", dt, batched, lg(m), lg(n), lg(k))
}

// autotuneMode is what WEBTENSOR_AUTOTUNE asks of d: use saved choices,
// and tune classes that have none.
func (d *Device) autotuneMode() (use, tune bool) {
	switch os.Getenv(autotuneEnv) {
	case "0":
		return false, false
	case "1":
		return true, true
	}
	return true, d.hardwareGEMM() && !autotuneQuiet()
}

// autotuneQuiet reports whether the default leaves tuning off although the
// adapter is hardware: in tests (a variable so that tests can check the
// default of a program).
var autotuneQuiet = testing.Testing

// autotuned returns the tuned variant for g's class, tuning it first when
// autotuneMode says so.
func (d *Device) autotuned(g *gemm) (matmulConfig, bool) {
	use, tune := d.autotuneMode()
	if !use {
		return matmulConfig{}, false
	}
	t := d.autotuneTable()
	class := shapeClass(g.out.DType, g.batch > 1, g.m, g.k, g.n)
	t.mu.Lock()
	c, ok := t.choices[class]
	t.mu.Unlock()
	if ok || !tune {
		return c, ok
	}
	// Goroutines that meet the same new class at once tune it once: the
	// first tunes, the others wait for it and take its choice.
	autotuneMu.Lock()
	defer autotuneMu.Unlock()
	t.mu.Lock()
	c, ok = t.choices[class]
	t.mu.Unlock()
	if ok {
		return c, ok
	}
	if _, err := d.autotuneMatMul(g.out.DType, g.batch, g.m, g.k, g.n); err != nil {
		return matmulConfig{}, false
	}
	t.mu.Lock()
	c, ok = t.choices[class]
	t.mu.Unlock()
	return c, ok
}

// matmulCandidates are the variants autotune times for batch M×K·K×N
// products: the heuristic's choice first (on GPUs also with Prefetch),
// then every tile that fits (the warp-tiled ones on GPUs only), each also
// split along K where its workgroups
// are few and K long. On a GPU that is at most 2·len(matmulTiles)+2 (38),
// each compiled once and timed a few times, so that tuning a class stays
// within a second or two.
func (d *Device) matmulCandidates(batch, m, k, n int) []matmulConfig {
	var cands []matmulConfig
	add := func(c matmulConfig) {
		if !slices.Contains(cands, c) {
			cands = append(cands, c)
		}
	}
	if d.hardwareGEMM() {
		c := d.gpuMatMulHeuristic(batch, m, k, n)
		add(c)
		if c.Kind == matmulTiled {
			c.Prefetch = true
			add(c)
		}
	} else {
		add(matmulConfig{Kind: matmulClassic})
	}
	for _, c := range matmulTiles {
		// The warp layout arranges GPU warps of 32; on a CPU adapter the
		// invocations are SIMD lanes of a few cores, for which it would
		// only reorder the same work (and each candidate compiles for
		// seconds there).
		if !d.fits(c) || c.Warp && !d.hardwareGEMM() {
			continue
		}
		add(c)
		blocks := batch * ceilDiv(m, c.WY*c.TM) * ceilDiv(n, c.WX*c.TN)
		if d.hardwareGEMM() {
			if blocks < gpuWantWorkgroups && k >= 2*gpuMinSliceK {
				c.Split = min(ceilDiv(gpuWantWorkgroups, blocks), k/gpuMinSliceK)
				add(c)
			}
			continue
		}
		for _, s := range []int{4, 16} {
			if blocks < 64 && k >= s*256 {
				c.Split = s
				add(c)
			}
		}
	}
	return cands
}

// autotuneFlops is about how much work one timed repetition of a
// candidate does on a GPU: products are repeated up to this between
// synchronisations, so that the wall clock measures kernels rather than
// the round trip of a Sync. On an H200 that round trip is 30–50 µs and
// varies by about 10 µs, while a 1,024³ product or a 64×256³ batch takes
// about 90 µs: with one product per timing (4e9 before session 9) the
// tuner's choice for the batch was 8% behind the best tile, forced one by
// one. 4e10 makes a timing about 1–2 ms at 20–40 TFLOP/s.
const autotuneFlops = 4e10

// autotuneMaxRuns bounds the repetitions of a small product in one timing
// (a 256³ product, 34 MFLOP, runs this many times: about 1 ms on a GPU).
const autotuneMaxRuns = 256

// autotuneRounds is how many times every candidate is timed after the
// round that compiles them; a candidate's time is its best round. The
// rounds go over all candidates in turn, so that a slow stretch of the
// device (clocks, another process) falls on several of them rather than
// all the repetitions of one.
const autotuneRounds = 3

// autotuneRuns is the repetitions of a batch M×K·K×N product per timing:
// one on software adapters (slow enough to time alone), on GPUs enough
// for about autotuneFlops, within [1, autotuneMaxRuns].
func autotuneRuns(hardware bool, batch, m, k, n int) int {
	if !hardware {
		return 1
	}
	flops := 2 * float64(batch) * float64(m) * float64(k) * float64(n)
	return int(min(max(autotuneFlops/flops, 1), autotuneMaxRuns))
}

// AutotuneMatMul times the MatMul variants on this adapter for an
// M×K·K×N product of dtype dt (contiguous, one batch), records the fastest
// for that shape class, saves the table and returns the variant's name.
// It synchronises the device and allocates scratch buffers of that size.
func (d *Device) AutotuneMatMul(dt hal.DType, m, k, n int) (string, error) {
	autotuneMu.Lock()
	defer autotuneMu.Unlock()
	return d.autotuneMatMul(dt, 1, m, k, n)
}

// autotuneMu lets one tuning run at a time in the process: a tuning forces
// its candidates through matmulOverride, which is process-wide, so two at
// once would time each other's variants and could restore each other's
// candidate as the "previous" override, leaving every later MatMul pinned
// to it. MatMuls of other goroutines during a tuning may run a candidate
// variant too, which gives the same values.
var autotuneMu sync.Mutex

// autotuneMatMul is AutotuneMatMul over batch products; the caller holds
// autotuneMu.
func (d *Device) autotuneMatMul(dt hal.DType, batch, m, k, n int) (string, error) {
	if m < 2 || n < 2 {
		return "", fmt.Errorf("webgpu: autotune %s: %d×%d·%d×%d: matrix-vector products have one variant: %w", hal.KernelMatMul, m, k, k, n, hal.ErrInvalid)
	}
	size := int64(dt.Size())
	var bufs []hal.Buffer
	defer func() {
		for _, b := range bufs {
			d.Free(b)
		}
	}()
	view := func(rows, cols int) (hal.View, error) {
		b, err := d.Alloc(max(size*int64(batch*rows*cols), 4))
		if err != nil {
			return hal.View{}, err
		}
		bufs = append(bufs, b)
		v := hal.Contiguous(b, dt, batch, rows, cols)
		return v, d.Fill(v, 0.25, 1e-3)
	}
	a, err := view(m, k)
	if err != nil {
		return "", err
	}
	b, err := view(k, n)
	if err != nil {
		return "", err
	}
	c, err := view(m, n)
	if err != nil {
		return "", err
	}
	prev := matmulOverride.Load()
	defer matmulOverride.Store(prev)
	runs := autotuneRuns(d.hardwareGEMM(), batch, m, k, n)
	cands := d.matmulCandidates(batch, m, k, n)
	// times[i] is candidate i's best timing, zero while it has none; a
	// candidate that fails once is out.
	times := make([]time.Duration, len(cands))
	failed := make([]bool, len(cands))
	for round := range autotuneRounds + 1 { // round 0 compiles
		for i := range cands {
			if failed[i] {
				continue
			}
			matmulOverride.Store(&cands[i])
			start := time.Now()
			var err error
			for r := 0; r < runs && err == nil; r++ {
				err = d.MatMul(c, a, b, 1, 0)
			}
			if err == nil {
				err = d.Sync()
			}
			if err != nil {
				failed[i] = true
				continue
			}
			if e := time.Since(start); round > 0 && (times[i] == 0 || e < times[i]) {
				times[i] = e
			}
		}
	}
	best, bestTime := matmulConfig{}, time.Duration(-1)
	for i, e := range times {
		if !failed[i] && e > 0 && (bestTime < 0 || e < bestTime) {
			best, bestTime = cands[i], e
		}
	}
	if bestTime < 0 {
		return "", fmt.Errorf("webgpu: autotune %s: %d×%d·%d×%d %v on %s: no variant ran", hal.KernelMatMul, m, k, k, n, dt, d.info.Name)
	}
	t := d.autotuneTable()
	t.mu.Lock()
	t.choices[shapeClass(dt, batch > 1, m, k, n)] = best
	t.mu.Unlock()
	return best.String(), t.save()
}
