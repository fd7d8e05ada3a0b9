// Command webdemo serves a page that trains cmd/demo's digits CNN in the
// browser, on the page's WebGPU (navigator.gpu; the CPU backend when the
// browser has none), with a live chart of the loss and held-out accuracy,
// the adapter's name and the throughput.
//
// Usage, from the repository root:
//
//	go run ./cmd/webdemo [-addr 127.0.0.1:8080]
//	go run ./cmd/webdemo -static DIR   # or make webdemo-static
//
// It builds the page's program (./cmd/webdemo/page) for GOOS=js
// GOARCH=wasm with the go command on the PATH, then serves it with Go's
// wasm_exec.js and the page on -addr until interrupted. The page's query
// may set epochs, batch, lr and seed (…/?epochs=12); fallback=1 asks for
// the browser's software adapter (SwiftShader in Chromium) rather than
// the GPU.
//
// With -static DIR it writes the page instead of serving it: index.html,
// webdemo.wasm, webdemo.wasm.gz (for servers that send precompressed
// files, such as nginx's gzip_static or Caddy's precompressed) and Go's
// wasm_exec.js, into DIR, which any static file server can then serve
// with no Go toolchain (python3 -m http.server -d DIR, GitHub Pages, a
// CDN); the server must send .wasm as application/wasm.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "webdemo:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webdemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve the page on")
	static := fs.String("static", "", "write the page's files into this folder instead of serving them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *static != "" {
		fmt.Fprintln(stdout, "building the page's program for js/wasm…")
		files, err := writeStatic(*static)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintf(stdout, "%s\t%d bytes\n", f.Path, f.Size)
		}
		fmt.Fprintf(stdout, "serve %s with any static file server, e.g. python3 -m http.server -d %s\n", *static, *static)
		return nil
	}
	dir, err := os.MkdirTemp("", "webdemo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(stdout, "building the page's program for js/wasm…")
	wasm, err := buildPage(dir)
	if err != nil {
		return err
	}
	h, err := newHandler(wasm)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serving on http://%s/ (Ctrl-C stops)\n", ln.Addr())
	return http.Serve(ln, h)
}
