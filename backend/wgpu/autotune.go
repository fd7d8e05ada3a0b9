//go:build cgo || (js && wasm)

package wgpu

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/hal"
)

// Autotune: MatMul variants timed on the adapter itself, per shape class,
// remembered in <cache dir>/webtensor/autotune/<adapter key>.json. The
// table is read on a device's first MatMul. With WEBTENSOR_AUTOTUNE=1 a
// MatMul whose class has no entry tunes it first (a few runs of each
// candidate at that size); AutotuneMatMul tunes a class on demand.

// autotuneEnv turns on tuning of unseen shape classes during MatMul.
const autotuneEnv = "WEBTENSOR_AUTOTUNE"

// autotuneDirEnv overrides the cache directory (tests use a temporary one).
const autotuneDirEnv = "WEBTENSOR_AUTOTUNE_DIR"

// autotuneFile is the on-disk form of one adapter's table.
type autotuneFile struct {
	Adapter string                  `json:"adapter"`
	Choices map[string]matmulConfig `json:"choices"`
}

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
		if data, err := os.ReadFile(t.path); err == nil && json.Unmarshal(data, &f) == nil {
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
	data, err := json.MarshalIndent(autotuneFile{Adapter: t.adapter, Choices: t.choices}, "", "  ")
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

// autotuned returns the tuned variant for g's class, tuning it first
// under WEBTENSOR_AUTOTUNE=1.
func (d *Device) autotuned(g *gemm) (matmulConfig, bool) {
	t := d.autotuneTable()
	class := shapeClass(g.out.DType, g.batch > 1, g.m, g.k, g.n)
	t.mu.Lock()
	c, ok := t.choices[class]
	t.mu.Unlock()
	if ok || os.Getenv(autotuneEnv) != "1" {
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
	if _, err := d.autotuneMatMul(g.out.DType, g.m, g.k, g.n); err != nil {
		return matmulConfig{}, false
	}
	t.mu.Lock()
	c, ok = t.choices[class]
	t.mu.Unlock()
	return c, ok
}

// matmulCandidates are the variants autotune times for an M×K·K×N product.
func (d *Device) matmulCandidates(m, k, n int) []matmulConfig {
	cands := []matmulConfig{{Kind: matmulClassic}}
	for _, c := range matmulTiles {
		if !d.fits(c) {
			continue
		}
		cands = append(cands, c)
		blocks := ceilDiv(m, c.WY*c.TM) * ceilDiv(n, c.WX*c.TN)
		for _, s := range []int{4, 16} {
			if blocks < 64 && k >= s*256 {
				c.Split = s
				cands = append(cands, c)
			}
		}
	}
	return cands
}

// AutotuneMatMul times every MatMul variant on this adapter for an
// M×K·K×N product of dtype dt (contiguous, one batch), records the fastest
// for that shape class, saves the table and returns the variant's name.
// It synchronises the device and allocates scratch buffers of that size.
func (d *Device) AutotuneMatMul(dt hal.DType, m, k, n int) (string, error) {
	autotuneMu.Lock()
	defer autotuneMu.Unlock()
	return d.autotuneMatMul(dt, m, k, n)
}

// autotuneMu lets one tuning run at a time in the process: a tuning forces
// its candidates through matmulOverride, which is process-wide, so two at
// once would time each other's variants and could restore each other's
// candidate as the "previous" override, leaving every later MatMul pinned
// to it. MatMuls of other goroutines during a tuning may run a candidate
// variant too, which gives the same values.
var autotuneMu sync.Mutex

// autotuneMatMul is AutotuneMatMul; the caller holds autotuneMu.
func (d *Device) autotuneMatMul(dt hal.DType, m, k, n int) (string, error) {
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
		b, err := d.Alloc(max(size*int64(rows*cols), 4))
		if err != nil {
			return hal.View{}, err
		}
		bufs = append(bufs, b)
		v := hal.Contiguous(b, dt, rows, cols)
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
	best, bestTime := matmulConfig{}, time.Duration(-1)
	for _, cand := range d.matmulCandidates(m, k, n) {
		matmulOverride.Store(&cand)
		elapsed := time.Duration(-1)
		for rep := range 4 { // the first run compiles
			start := time.Now()
			err := d.MatMul(c, a, b, 1, 0)
			if err == nil {
				err = d.Sync()
			}
			if err != nil {
				elapsed = -1
				break
			}
			if e := time.Since(start); rep > 0 && (elapsed < 0 || e < elapsed) {
				elapsed = e
			}
		}
		if elapsed >= 0 && (bestTime < 0 || elapsed < bestTime) {
			best, bestTime = cand, elapsed
		}
	}
	if bestTime < 0 {
		return "", fmt.Errorf("webgpu: autotune %s: %d×%d·%d×%d %v on %s: no variant ran", hal.KernelMatMul, m, k, k, n, dt, d.info.Name)
	}
	t := d.autotuneTable()
	t.mu.Lock()
	t.choices[shapeClass(dt, false, m, k, n)] = best
	t.mu.Unlock()
	return best.String(), t.save()
}
