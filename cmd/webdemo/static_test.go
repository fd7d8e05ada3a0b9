package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStaticBuild builds the static page (-static) and checks that its
// folder is complete: every file index.html loads is there, the wasm is
// a WebAssembly module with its gzip beside it, and a plain static file
// server (http.FileServer) serves the page and the wasm as
// application/wasm, which instantiateStreaming requires.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the page's program for js/wasm")
	}
	dir := filepath.Join(t.TempDir(), "site")
	var out bytes.Buffer
	require.NoError(t, run([]string{"-static", dir}, &out, io.Discard))
	for _, name := range []string{"index.html", "webdemo.wasm", "webdemo.wasm.gz", "wasm_exec.js"} {
		require.Contains(t, out.String(), filepath.Join(dir, name), "the report names each file")
	}

	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	require.Equal(t, indexHTML, string(index))
	loads := regexp.MustCompile(`(?:src="|fetch\(")([^"]+)"`).FindAllStringSubmatch(string(index), -1)
	require.NotEmpty(t, loads)
	for _, m := range loads {
		require.FileExists(t, filepath.Join(dir, filepath.FromSlash(m[1])), "index.html loads %s", m[1])
	}

	wasm, err := os.ReadFile(filepath.Join(dir, "webdemo.wasm"))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(wasm, []byte("\x00asm")), "webdemo.wasm is not a WebAssembly module")
	gz, err := os.Open(filepath.Join(dir, "webdemo.wasm.gz"))
	require.NoError(t, err)
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.True(t, bytes.Equal(wasm, unzipped), "webdemo.wasm.gz does not unzip to webdemo.wasm")
	info, err := gz.Stat()
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(len(wasm))/2, "the gzip should at least halve the wasm")
	t.Logf("webdemo.wasm %d bytes, gzipped %d", len(wasm), info.Size())

	execJS, err := os.ReadFile(filepath.Join(dir, "wasm_exec.js"))
	require.NoError(t, err)
	require.Contains(t, string(execJS), "globalThis.Go = class")

	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for path, want := range map[string]string{
		"/":             "text/html",
		"/webdemo.wasm": "application/wasm",
		"/wasm_exec.js": "text/javascript",
	} {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), want), "%s: Content-Type %q, want %s", path, resp.Header.Get("Content-Type"), want)
	}
}

func TestStaticBuildErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.Error(t, run([]string{"-static", filepath.Join(file, "site")}, io.Discard, io.Discard), "a folder under a file")
}
