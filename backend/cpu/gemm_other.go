//go:build !amd64

package cpu

// Other architectures use the portable kernel that gemm_kernel.go installs.
