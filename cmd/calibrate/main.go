// Command calibrate measures where the GPU starts to beat the CPU backend
// on this machine, for each op family that placement routes, and writes the
// thresholds that tensor.Auto uses (os.UserConfigDir()/webtensor/
// thresholds.json unless -o says otherwise), keyed by the adapter's name.
//
// Each timing is what a user holding host data pays: upload the operands,
// run the op, read the result back, on the CPU backend and on the GPU. The
// threshold of a family is the smallest size of the sweep from which the
// GPU wins at every larger size; -1 (tensor.Never) means it never won, as
// on a software adapter such as llvmpipe.
//
//	go run ./cmd/calibrate [-device N] [-quick] [-o path]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/webtensor/webtensor/tensor"
)

func main() {
	out := flag.String("o", "", "thresholds file to write (default: the user config dir's webtensor/thresholds.json)")
	quick := flag.Bool("quick", false, "short sweep with few repetitions (seconds; noisier)")
	device := flag.Int("device", 0, "WebGPU adapter index (webtensor:N)")
	flag.Parse()
	log.SetFlags(0)

	path := *out
	if path == "" {
		p, err := tensor.DefaultThresholdsPath()
		if err != nil {
			log.Fatalf("calibrate: %v (use -o)", err)
		}
		path = p
	}
	if err := calibrate(os.Stdout, path, fmt.Sprintf("webgpu:%d", *device), sweepFor(*quick)); err != nil {
		log.Fatalf("calibrate: %v", err)
	}
}
