package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tfjsLacks are the case groups the TensorFlow.js peer
// (bench/peers/tfjs) leaves out: float16 GEMM (tfjs-webgpu computes in
// float32), the convolution backward pass, 3-D convolutions, sort and
// scan, the CNN and Adam steps, the small-matmul chain and the exported
// ONNX models. Every
// other case of ours must be in the peer under the same name.
var tfjsLacks = map[string]bool{
	"matmul-f16": true, "conv2d-backward": true, "sort": true, "cumsum": true,
	"smallops-matmul": true, "cnn-step": true, "adam": true, "onnx": true,
	"conv3d": true, "conv3d-stack": true, "conv3d-backward": true,
}

// TestTfjsPeerMatch checks that tfjs_peer.mjs --list names the cases of
// ours that it has, in our order and under our names, since the report
// pairs results by name: a renamed or resized case of ours fails here
// instead of leaving the "÷ tfjs" column empty. --list loads neither
// tfjs nor Dawn, so it needs node only.
func TestTfjsPeerMatch(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node")
	}
	for _, quick := range []bool{true, false} {
		args := []string{"peers/tfjs/tfjs_peer.mjs", "--list"}
		if quick {
			args = append(args, "--quick")
		}
		out, err := exec.Command(node, args...).Output()
		require.NoError(t, err)
		peer := strings.Fields(string(out))
		var want []string
		for _, c := range cases(quick) {
			family, _, _ := strings.Cut(c.name, "/")
			if !tfjsLacks[family] {
				want = append(want, c.name)
			}
		}
		assert.Equal(t, want, peer, "quick=%v", quick)
	}
}
