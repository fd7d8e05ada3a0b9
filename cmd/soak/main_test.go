package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenDevices(t *testing.T) {
	devs, err := openDevices("cpu")
	require.NoError(t, err)
	require.Len(t, devs, 1)
	require.Equal(t, "cpu", devs[0].Name())
	_, err = openDevices("tpu")
	require.ErrorContains(t, err, `-device "tpu": want cpu, webgpu or all`)
	devs, err = openDevices("all")
	require.NoError(t, err)
	require.NotEmpty(t, devs, "all always has the CPU")
	require.Equal(t, "cpu", devs[0].Name())
}
