// Command browsertest runs a Go program compiled for GOOS=js GOARCH=wasm,
// typically a test binary (go test -c), in headless Chromium on the page's
// WebGPU, and exits with the program's exit code.
//
// It serves the program, Go's wasm_exec.js and a page that runs them on
// 127.0.0.1 from a port of its own, opens Chromium on the page with
// WebGPU enabled on SwiftShader (the software adapter every Chromium
// carries, so no GPU is needed), and prints what the program writes to
// stdout and stderr, which the page POSTs back in order; the program's
// exit is POSTed last. A program that does not exit within -timeout fails.
//
//	GOOS=js GOARCH=wasm go test -c -o wgpu.wasm ./backend/wgpu
//	go run ./internal/browsertest -wasm wgpu.wasm -- -test.run 'TestConformance$' -test.v
//
// With -root DIR the program can read the files under DIR, read-only,
// through package os (Go's js/wasm file system calls, which the page
// answers from the driver), its working directory being -cwd within DIR.
// That is how a package's tests read the repository's testdata in the
// browser:
//
//	GOOS=js GOARCH=wasm go test -c -o graph.wasm ./graph
//	go run ./internal/browsertest -wasm graph.wasm -root . -cwd /graph -- -test.v
//
// Writing (t.TempDir, os.Create) fails with EROFS or ENOSYS.
//
// Chromium's own messages are printed only when the run fails (or with -v).
package main

import (
	"bytes"
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
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed index.html
var page string

// envFlag collects repeated -env KEY=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return fmt.Sprint(map[string]string(e)) }

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("-env %q: want KEY=VALUE", s)
	}
	e[k] = v
	return nil
}

func main() {
	env := envFlag{}
	wasm := flag.String("wasm", "", "the program, built with GOOS=js GOARCH=wasm (required)")
	chromium := flag.String("chromium", "chromium", "the Chromium executable")
	timeout := flag.Duration("timeout", 10*time.Minute, "how long the program may run")
	verbose := flag.Bool("v", false, "print Chromium's messages even when the run passes")
	flag.Var(env, "env", "KEY=VALUE for the program's environment (repeatable)")
	files := flag.String("root", "", "a folder whose files the program may read (none by default)")
	cwd := flag.String("cwd", "/", "the program's working directory, a slash path within -root")
	flag.Parse()
	if *wasm == "" {
		fmt.Fprintln(os.Stderr, "browsertest: -wasm is required")
		os.Exit(2)
	}
	code, err := run(*wasm, *chromium, *timeout, *verbose, env, *files, *cwd, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "browsertest:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// wasmExec finds the wasm_exec.js of the Go that runs the driver.
func wasmExec() (string, error) {
	root := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	for _, p := range []string{filepath.Join(root, "lib", "wasm", "wasm_exec.js"), filepath.Join(root, "misc", "wasm", "wasm_exec.js")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no wasm_exec.js under %s", root)
}

func run(wasm, chromium string, timeout time.Duration, verbose bool, env map[string]string, files, cwd string, args []string) (int, error) {
	execJS, err := wasmExec()
	if err != nil {
		return 0, err
	}
	if args == nil {
		args = []string{}
	}
	// json.Marshal escapes <, > and &, so the configuration cannot end
	// the script element it is written into.
	config, err := json.Marshal(map[string]any{"args": args, "env": env, "root": files != "", "cwd": path.Clean("/" + cwd)})
	if err != nil {
		return 0, err
	}
	index := strings.Replace(page, "<body>", `<body><script type="application/json" id="config">`+string(config)+`</script>`, 1)

	exited := make(chan int, 1)
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, index)
	})
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, execJS) })
	mux.HandleFunc("GET /program.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		http.ServeFile(w, r, wasm)
	})
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(os.Stdout, r.Body)
	})
	mux.HandleFunc("POST /exit", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		code, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			code = 2
		}
		once.Do(func() { exited <- code })
	})
	if files != "" {
		root, err := os.OpenRoot(files)
		if err != nil {
			return 0, err
		}
		defer root.Close()
		serveFiles(mux, root)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	profile, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := "http://" + ln.Addr().String() + "/"
	cmd := exec.CommandContext(ctx, chromium,
		"--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader",
		"--enable-logging=stderr", "--v=0", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir="+profile, url)
	var chromeLog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &chromeLog, &chromeLog
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s (install it with apt-get install chromium): %w", chromium, err)
	}
	browserDone := make(chan error, 1)
	go func() { browserDone <- cmd.Wait() }()

	code := 0
	select {
	case code = <-exited:
	case err := <-browserDone:
		fmt.Fprintf(os.Stderr, "browsertest: Chromium exited before the program did (%v):\n%s\n", err, chromeLog.String())
		return 1, nil
	case <-time.After(timeout):
		fmt.Fprintf(os.Stderr, "browsertest: the program did not exit within %v\n", timeout)
		code = 1
	}
	cancel()
	if err := <-browserDone; err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(os.Stderr, "browsertest: chromium:", err)
	}
	if code != 0 || verbose {
		fmt.Fprintf(os.Stderr, "--- Chromium's messages:\n%s", chromeLog.String())
	}
	return code, nil
}

// fileStat is what the page's file system shim needs of a path.
type fileStat struct {
	Dir     bool     `json:"dir"`
	Size    int64    `json:"size"`
	Mode    uint32   `json:"mode"` // S_IFDIR or S_IFREG, and read permissions
	MtimeMs int64    `json:"mtimeMs"`
	Entries []string `json:"entries,omitempty"` // a folder's names, sorted
}

// serveFiles answers the page's file system calls from root, read-only:
// GET /fs/stat?path=P (JSON fileStat) and GET /fs/read?path=P (the bytes),
// P a slash path within root; os.Root keeps them inside it.
func serveFiles(mux *http.ServeMux, root *os.Root) {
	rel := func(r *http.Request) string {
		p := strings.TrimPrefix(path.Clean("/"+r.URL.Query().Get("path")), "/")
		if p == "" {
			return "."
		}
		return filepath.FromSlash(p)
	}
	mux.HandleFunc("GET /fs/stat", func(w http.ResponseWriter, r *http.Request) {
		p := rel(r)
		info, err := root.Stat(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		st := fileStat{Size: info.Size(), Mode: 0o100444, MtimeMs: info.ModTime().UnixMilli()}
		if info.IsDir() {
			st.Dir, st.Mode = true, 0o40555
			f, err := root.Open(p)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			st.Entries, err = f.Readdirnames(-1)
			f.Close()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			slices.Sort(st.Entries)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("GET /fs/read", func(w http.ResponseWriter, r *http.Request) {
		f, err := root.Open(rel(r))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, f)
	})
}
