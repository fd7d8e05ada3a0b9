//go:build cgo

package wgpu

import ("testing";"os")

func TestZZRenderTmp(t *testing.T) {
	sh := newTiledShader(matmulTiles[tile128x64db], "f32", "f32")
	sh.AK, sh.VecA, sh.VecB = true, true, true
	sh.bind(nil); sh.loads()
	src, err := render("matmul_tiled.wgsl", sh)
	if err != nil { t.Fatal(err) }
	os.WriteFile("/tmp/i15g_render.wgsl", []byte(src), 0o644)
}
