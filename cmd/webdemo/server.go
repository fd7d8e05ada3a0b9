package main

import (
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed index.html
var indexHTML string

// pagePackage is the page's program, built for the browser.
const pagePackage = "github.com/webtensor/webtensor/cmd/webdemo/page"

// buildPage builds the page's program for GOOS=js GOARCH=wasm into dir and
// returns the binary's path. It runs the go command, so it needs the
// module's source: run webdemo from within the repository.
func buildPage(dir string) (string, error) {
	out := filepath.Join(dir, "webdemo.wasm")
	cmd := exec.Command("go", "build", "-o", out, pagePackage)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s for js/wasm: %w\n%s", pagePackage, err, msg)
	}
	return out, nil
}

// wasmExec finds the wasm_exec.js of the go command's Go, which must match
// the Go that built the program: lib/wasm since Go 1.24, misc/wasm before.
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
	return "", fmt.Errorf("no wasm_exec.js under %s/lib/wasm or %s/misc/wasm", root, root)
}

// newHandler serves the page at /, the program at /webdemo.wasm and Go's
// wasm_exec.js.
func newHandler(wasm string) (http.Handler, error) {
	execJS, err := wasmExec()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(wasm); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, indexHTML)
	})
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, execJS)
	})
	mux.HandleFunc("GET /webdemo.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		http.ServeFile(w, r, wasm)
	})
	return mux, nil
}
