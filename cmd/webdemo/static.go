package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// staticFile is one file writeStatic wrote.
type staticFile struct {
	Path string
	Size int64
}

// writeStatic builds the page's program into dir (made if missing) and
// writes beside it everything a static file server needs to serve the
// page: index.html, webdemo.wasm, its gzip (webdemo.wasm.gz) and the
// wasm_exec.js of the Go that built it. It returns the files written.
func writeStatic(dir string) ([]staticFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	wasm, err := buildPage(dir)
	if err != nil {
		return nil, err
	}
	execJS, err := wasmExec()
	if err != nil {
		return nil, err
	}
	index := filepath.Join(dir, "index.html")
	if err := os.WriteFile(index, []byte(indexHTML), 0o644); err != nil {
		return nil, err
	}
	execCopy := filepath.Join(dir, "wasm_exec.js")
	if err := copyFile(execCopy, execJS); err != nil {
		return nil, err
	}
	gz := wasm + ".gz"
	if err := gzipFile(gz, wasm); err != nil {
		return nil, err
	}
	var files []staticFile
	for _, p := range []string{index, wasm, gz, execCopy} {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		files = append(files, staticFile{Path: p, Size: info.Size()})
	}
	return files, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// gzipFile writes src gzipped, at the best compression: it is done once
// per build and the page's size is what its users wait for.
func gzipFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		out.Close()
		return err
	}
	if _, err := io.Copy(zw, in); err != nil {
		out.Close()
		return fmt.Errorf("gzip %s: %w", src, err)
	}
	if err := zw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
