package cpu

// matmul is the kernel behind Device.MatMul.
//
// Measured with BenchmarkMatMulImpl on a 2-core AMD EPYC (GOMAXPROCS=2):
//
//	            256³          1024³
//	matmulGo    15 GFLOPS     16 GFLOPS
//	gonum       31 GFLOPS     32 GFLOPS
//
// gonum's Sgemm wins by about 2× because its inner loops are SIMD assembly,
// which pure Go cannot express, so it is the kernel in use. matmulGo stays
// as the portable baseline that the assembly microkernels of a later issue
// will be measured against, and is tested alongside.
func matmul(dst, a, b []float32, m, k, n int) { matmulGonum(dst, a, b, m, k, n) }
