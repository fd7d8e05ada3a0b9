package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeFiles: the page's file system calls see root's files and
// folders, read-only, and nothing outside root.
func TestServeFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pkg", "testdata"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pkg", "testdata", "b.json"), []byte(`{"x":1}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pkg", "a.txt"), []byte("hello"), 0o644))
	outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(dir))
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	t.Cleanup(func() { os.Remove(outside) })
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "pkg", "link")))

	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	mux := http.NewServeMux()
	serveFiles(mux, root)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(op, p string) (int, []byte) {
		resp, err := http.Get(srv.URL + "/fs/" + op + "?path=" + url.QueryEscape(p))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	stat := func(p string) fileStat {
		code, b := get("stat", p)
		require.Equal(t, http.StatusOK, code, "stat %s: %s", p, b)
		var st fileStat
		require.NoError(t, json.Unmarshal(b, &st))
		return st
	}

	st := stat("/pkg")
	require.True(t, st.Dir)
	require.Equal(t, uint32(0o40555), st.Mode)
	require.Equal(t, []string{"a.txt", "link", "testdata"}, st.Entries)
	require.True(t, stat("/").Dir)

	st = stat("/pkg/../pkg/testdata/b.json")
	require.False(t, st.Dir)
	require.Equal(t, int64(7), st.Size)
	require.Equal(t, uint32(0o100444), st.Mode)
	code, b := get("read", "/pkg/a.txt")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "hello", string(b))

	for _, p := range []string{"/pkg/missing", "/../" + filepath.Base(outside), "/pkg/link"} {
		code, _ := get("read", p)
		require.Equal(t, http.StatusNotFound, code, "read %s", p)
	}
	code, _ = get("stat", "/pkg/missing")
	require.Equal(t, http.StatusNotFound, code)
}
