// Command browser measures webtensor and TensorFlow.js's WebGPU backend
// side by side in one headless Chromium page, on the page's WebGPU
// (navigator.gpu; SwiftShader, the software adapter every Chromium
// carries, so no GPU is needed): webtensor as the benchmark program
// itself (./bench built for GOOS=js GOARCH=wasm, the same cases, checks
// and timing as natively), tfjs through the cases of the node peer
// (bench/peers/tfjs/cases.mjs, the same names, sizes and timing) on
// npm's @tensorflow/tfjs and @tensorflow/tfjs-backend-webgpu, pinned in
// bench/browser/package-lock.json and served from node_modules on
// 127.0.0.1, never a CDN.
//
//	npm ci --ignore-scripts --prefix bench/browser   # make bench-browser does it
//	go run ./bench/browser [-json bench/results/browser/browser.json] [-rounds 2] [-min-time 1s]
//	                       [-filter RE] [-adapter swiftshader] [-markdown]
//
// -adapter "" leaves Chromium's WebGPU adapter to the browser: a GPU
// where the machine and the Chromium build expose one.
//
// The page runs the two implementations in rounds, ABBA (tfjs, webtensor,
// webtensor, tfjs for -rounds 2), so that a drift of the machine's load
// falls on both; each round measures every case once after checking its
// first result (webtensor against the CPU backend, tfjs against float64 in
// JavaScript), and a row's median is the median of its rounds' medians.
// The results are one bench/schema file (impl "webtensor" and
// "tfjs-webgpu", device "browser:webgpu"), and a table, with the ratio,
// on stdout (-markdown: BENCHMARKS.md's form).
//
// Run it from the repository root: it builds ./bench with the go command.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/bench/schema"
)

//go:embed index.html
var page string

// defaultCases are issue 21's rows: GEMM at 256 and 1024, a 1M-element
// add and the MLP training step.
const defaultCases = `^(matmul/(256|1024)|add/1M|mlp-step/784-512-512-10-b128)$`

// tfjsFiles are the files the page loads from npm's packages, by the path
// it asks for.
var tfjsFiles = map[string]string{
	"/tfjs/tf.min.js":                "@tensorflow/tfjs/dist/tf.min.js",
	"/tfjs/tf-backend-webgpu.min.js": "@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "bench/browser:", err)
		os.Exit(1)
	}
}

type config struct {
	jsonPath, filter, chromium string
	adapter                    string // Chromium's --use-webgpu-adapter; "" for its default
	rounds, minSamples         int
	minTime, timeout           time.Duration
	markdown, verbose          bool
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench/browser", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.jsonPath, "json", "", "write the results to this bench/schema JSON file")
	fs.StringVar(&c.filter, "filter", defaultCases, "the cases, a regular expression over bench's case names")
	fs.StringVar(&c.chromium, "chromium", "chromium", "the Chromium executable")
	fs.StringVar(&c.adapter, "adapter", "swiftshader", `Chromium's WebGPU adapter (--use-webgpu-adapter); "" for the browser's default, a GPU where it has one`)
	fs.IntVar(&c.rounds, "rounds", 2, "rounds of each implementation, in ABBA order")
	fs.IntVar(&c.minSamples, "min-samples", 5, "samples per case and round at the least")
	fs.DurationVar(&c.minTime, "min-time", time.Second, "measure each case at least this long per round")
	fs.DurationVar(&c.timeout, "timeout", 20*time.Minute, "how long the whole run may take")
	fs.BoolVar(&c.markdown, "markdown", false, "print the table as Markdown")
	fs.BoolVar(&c.verbose, "v", false, "print Chromium's messages")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.rounds < 1 || c.minSamples < 1 || c.minTime <= 0 {
		return fmt.Errorf("-rounds, -min-samples and -min-time must be positive")
	}
	if _, err := regexp.Compile(c.filter); err != nil {
		return fmt.Errorf("-filter: %w", err)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	modules := filepath.Join(root, "bench", "browser", "node_modules")
	for _, f := range tfjsFiles {
		if _, err := os.Stat(filepath.Join(modules, f)); err != nil {
			return fmt.Errorf("%w: run npm ci --ignore-scripts --prefix bench/browser (make bench-browser does)", err)
		}
	}
	dir, err := os.MkdirTemp("", "bench-browser-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	wasm := filepath.Join(dir, "bench.wasm")
	fmt.Fprintln(stderr, "building ./bench for js/wasm…")
	build := exec.Command("go", "build", "-o", wasm, "./bench")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building ./bench for js/wasm: %w\n%s", err, out)
	}
	execJS, err := wasmExec()
	if err != nil {
		return err
	}
	res, err := runPage(c, pageFiles{
		wasm: wasm, wasmExec: execJS, modules: modules,
		cases: filepath.Join(root, "bench", "peers", "tfjs", "cases.mjs"),
	}, stderr)
	if err != nil {
		return err
	}
	file := combine(res, c)
	file.Machine = hostMachine(c.chromium, res)
	if c.jsonPath != "" {
		if err := os.MkdirAll(filepath.Dir(c.jsonPath), 0o755); err != nil {
			return err
		}
		if err := schema.Write(c.jsonPath, file); err != nil {
			return err
		}
	}
	printTable(stdout, file, c.markdown)
	for _, r := range file.Results {
		if r.Error != "" {
			return fmt.Errorf("%s (%s): %s", r.Case, r.Impl, r.Error)
		}
	}
	return nil
}

// moduleRoot is the folder of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run it within the webtensor module")
	}
	return filepath.Dir(mod), nil
}

// wasmExec finds the wasm_exec.js of the go command's Go, which built the
// program: lib/wasm since Go 1.24, misc/wasm before.
func wasmExec() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	for _, p := range []string{filepath.Join(root, "lib", "wasm", "wasm_exec.js"), filepath.Join(root, "misc", "wasm", "wasm_exec.js")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no wasm_exec.js under %s", root)
}

type pageFiles struct{ wasm, wasmExec, modules, cases string }

// tfjsVersions names the npm packages the page loads, from their
// package.json files.
func tfjsVersions(modules string) string {
	var parts []string
	for _, pkg := range []string{"@tensorflow/tfjs", "@tensorflow/tfjs-backend-webgpu"} {
		var meta struct{ Version string }
		b, err := os.ReadFile(filepath.Join(modules, pkg, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &meta)
		}
		if err != nil || meta.Version == "" {
			meta.Version = "?"
		}
		parts = append(parts, strings.TrimPrefix(pkg, "@tensorflow/")+" "+meta.Version)
	}
	return strings.Join(parts, ", ")
}

// round is what the page posts after each round of one implementation.
type round struct {
	Impl    string          `json:"impl"` // "webtensor" or "tfjs-webgpu"
	Round   int             `json:"round"`
	Results []schema.Result `json:"results"`
	// Device: the adapter as the page saw it; Versions: tfjs's packages.
	Device   schema.Device `json:"device"`
	Versions string        `json:"versions,omitempty"`
}

// pageResult is everything the page posted.
type pageResult struct {
	rounds    []round
	userAgent string
}

// runPage serves the page and its files on 127.0.0.1, runs it in headless
// Chromium on SwiftShader and collects the rounds it posts.
func runPage(c config, f pageFiles, stderr io.Writer) (pageResult, error) {
	benchArgs := []string{"-device", "webgpu", "-threads", "1", "-unfused=false",
		"-filter", c.filter, "-min-time", c.minTime.String(), "-min-samples", strconv.Itoa(c.minSamples),
		"-json", "/out/webtensor.json"}
	cfg, err := json.Marshal(map[string]any{
		"benchArgs":  benchArgs,
		"env":        benchEnv(c.adapter),
		"filter":     c.filter,
		"rounds":     c.rounds,
		"minTime":    c.minTime.Seconds(),
		"minSamples": c.minSamples,
		"versions":   tfjsVersions(f.modules),
	})
	if err != nil {
		return pageResult{}, err
	}
	index := strings.Replace(page, "<body>", `<body><script type="application/json" id="config">`+string(cfg)+`</script>`, 1)

	var (
		mu     sync.Mutex
		result pageResult
		done   = make(chan error, 1)
		once   sync.Once
	)
	finish := func(err error) { once.Do(func() { done <- err }) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, index)
	})
	serve := func(path, file, contentType string) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			http.ServeFile(w, r, file)
		})
	}
	serve("/wasm_exec.js", f.wasmExec, "text/javascript")
	serve("/bench.wasm", f.wasm, "application/wasm")
	serve("/cases.mjs", f.cases, "text/javascript")
	for path, file := range tfjsFiles {
		serve(path, filepath.Join(f.modules, file), "text/javascript")
	}
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) { io.Copy(stderr, r.Body) })
	mux.HandleFunc("POST /round", func(w http.ResponseWriter, r *http.Request) {
		var rd round
		if err := json.NewDecoder(r.Body).Decode(&rd); err != nil {
			finish(fmt.Errorf("the page posted a round that is not JSON: %w", err))
			return
		}
		mu.Lock()
		result.rounds = append(result.rounds, rd)
		result.userAgent = r.UserAgent()
		mu.Unlock()
	})
	mux.HandleFunc("POST /done", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if msg := strings.TrimSpace(string(b)); msg != "" {
			finish(errors.New("the page failed: " + msg))
			return
		}
		finish(nil)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return pageResult{}, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	profile, err := os.MkdirTemp("", "bench-browser-profile-")
	if err != nil {
		return pageResult{}, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flags := []string{"--headless=new", "--no-sandbox", "--enable-unsafe-webgpu",
		"--enable-logging=stderr", "--v=0", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir=" + profile}
	if c.adapter != "" {
		flags = append(flags, "--use-webgpu-adapter="+c.adapter)
	}
	cmd := exec.CommandContext(ctx, c.chromium, append(flags, "http://"+ln.Addr().String()+"/")...)
	var chromeLog strings.Builder
	var logMu sync.Mutex
	cmd.Stdout = lockedWriter{&logMu, &chromeLog}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return pageResult{}, fmt.Errorf("start %s (apt-get install chromium): %w", c.chromium, err)
	}
	browserDone := make(chan error, 1)
	go func() { browserDone <- cmd.Wait() }()
	select {
	case err = <-done:
	case werr := <-browserDone:
		err = fmt.Errorf("chromium exited before the page was done: %v", werr)
	case <-time.After(c.timeout):
		err = fmt.Errorf("the page was not done within %v", c.timeout)
	}
	cancel()
	<-browserDone
	if err != nil || c.verbose {
		logMu.Lock()
		fmt.Fprintf(stderr, "--- Chromium's messages:\n%s", chromeLog.String())
		logMu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	return result, err
}

// benchEnv is the benchmark program's environment: on SwiftShader, which
// Chromium offers as its fallback adapter, webtensor must ask for the
// fallback adapter (wgpu.FallbackEnv) as internal/browsertest's pages do.
func benchEnv(adapter string) map[string]string {
	if adapter == "swiftshader" {
		return map[string]string{"WEBTENSOR_WEBGPU_FALLBACK": "1"}
	}
	return map[string]string{}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// combine makes one result per case and implementation out of the
// rounds: the median of the rounds' medians, the best of their bests,
// the samples summed; the first error wins.
func combine(res pageResult, c config) *schema.File {
	type key struct{ impl, name string }
	var order []key
	byKey := map[key][]schema.Result{}
	for _, rd := range res.rounds {
		for _, r := range rd.Results {
			r.Impl = rd.Impl
			if r.Adapter == "" {
				r.Adapter, r.Backend, r.Type = rd.Device.Adapter, rd.Device.Backend, rd.Device.Type
			}
			k := key{rd.Impl, r.Case}
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], r)
		}
	}
	f := &schema.File{Suite: schema.Suite, Schema: schema.Version, Tool: "bench-browser", Started: time.Now().UTC(),
		Args: []string{"-filter", c.filter, "-rounds", strconv.Itoa(c.rounds), "-min-time", c.minTime.String()}}
	for _, k := range order {
		rs := byKey[k]
		out := rs[0]
		out.Device, out.Threads = "browser:webgpu", 1
		var medians []float64
		out.Samples, out.BestSeconds = 0, 0
		for _, r := range rs {
			if r.Error != "" && out.Error == "" {
				out.Error = r.Error
			}
			if r.MedianSeconds > 0 {
				medians = append(medians, r.MedianSeconds)
			}
			if r.BestSeconds > 0 && (out.BestSeconds == 0 || r.BestSeconds < out.BestSeconds) {
				out.BestSeconds = r.BestSeconds
			}
			out.Samples += r.Samples
		}
		ref := firstGood(rs)
		out.MedianSeconds = median(medians)
		out.Median = rescale(ref, out.MedianSeconds)
		out.Best = rescale(ref, out.BestSeconds)
		out.Variant = fmt.Sprintf("%d rounds", len(rs))
		for _, rd := range res.rounds {
			if rd.Impl == k.impl && rd.Versions != "" {
				out.Variant = rd.Versions + ", " + out.Variant
				break
			}
		}
		f.Results = append(f.Results, out)
	}
	return f
}

// firstGood is the first of rs with a measurement, rs[0] if none has.
func firstGood(rs []schema.Result) schema.Result {
	for _, r := range rs {
		if r.Median > 0 && r.MedianSeconds > 0 {
			return r
		}
	}
	return rs[0]
}

// rescale converts seconds per iteration into r's unit, using the work
// its own median and seconds imply (the page's cases carry no work).
func rescale(r schema.Result, seconds float64) float64 {
	if seconds <= 0 || r.Median <= 0 || r.MedianSeconds <= 0 {
		return 0
	}
	if schema.HigherIsBetter(r.Unit) {
		return r.Median * r.MedianSeconds / seconds
	}
	return r.Median / r.MedianSeconds * seconds
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// hostMachine is the machine the browser ran on, and the page's adapter.
func hostMachine(chromium string, res pageResult) schema.Machine {
	m := schema.Machine{CPU: cpuModel(), Cores: runtime.NumCPU(), OS: "js (" + runtime.GOOS + " host)", Arch: "wasm", Go: runtime.Version()}
	browser := res.userAgent
	if out, err := exec.Command(chromium, "--version").Output(); err == nil {
		browser = strings.TrimSpace(string(out))
	}
	for _, rd := range res.rounds {
		if rd.Impl == "webtensor" && rd.Device.Adapter != "" {
			d := rd.Device
			d.Name = "browser:webgpu"
			m.Devices = []schema.Device{d}
			m.GPU = d.Adapter + " in " + browser
			break
		}
	}
	if m.GPU == "" {
		m.GPU = browser
	}
	return m
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// printTable writes one row per case: webtensor's and tfjs's medians and
// their ratio as speeds (above 1, webtensor is faster).
func printTable(w io.Writer, f *schema.File, markdown bool) {
	type pair struct{ wt, tf *schema.Result }
	var names []string
	rows := map[string]*pair{}
	for i := range f.Results {
		r := &f.Results[i]
		p := rows[r.Case]
		if p == nil {
			p = &pair{}
			rows[r.Case] = p
			names = append(names, r.Case)
		}
		if r.Impl == "webtensor" {
			p.wt = r
		} else {
			p.tf = r
		}
	}
	cell := func(r *schema.Result) string {
		switch {
		case r == nil:
			return "–"
		case r.Error != "":
			return "error"
		}
		return schema.Format(r.Median) + " " + r.Unit
	}
	if markdown {
		fmt.Fprintln(w, "| case | webtensor (wasm) | tfjs-webgpu | webtensor ÷ tfjs |")
		fmt.Fprintln(w, "|---|--:|--:|--:|")
	} else {
		fmt.Fprintf(w, "%-32s %16s %16s %10s\n", "case", "webtensor (wasm)", "tfjs-webgpu", "÷ tfjs")
	}
	for _, name := range names {
		p := rows[name]
		ratio := "–"
		if p.wt != nil && p.tf != nil && p.wt.Speed() > 0 && p.tf.Speed() > 0 {
			ratio = fmt.Sprintf("%.2f×", p.wt.Speed()/p.tf.Speed())
		}
		if markdown {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, cell(p.wt), cell(p.tf), ratio)
		} else {
			fmt.Fprintf(w, "%-32s %16s %16s %10s\n", name, cell(p.wt), cell(p.tf), ratio)
		}
	}
}
