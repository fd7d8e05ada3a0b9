package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/nn/data"
	"github.com/webtensor/webtensor/tensor"
)

func openDevice(name string) (*tensor.Device, error) {
	if name == "" {
		var dev *tensor.Device
		// Default panics when WEBTENSOR_DEVICE names a device it cannot open.
		err := tensor.Catch(func() { dev = tensor.Default() })
		return dev, err
	}
	return tensor.Open(name)
}

// load returns the training and held-out sets, images of shape
// [1, height, width] with pixels in [0, 1], and says where they came from.
func load(c config) (trainSet, testSet *data.Dataset, source string, err error) {
	if c.data == "" {
		all, err := loadDigits(c.digits)
		if err != nil {
			return nil, nil, "", err
		}
		trainSet, testSet = all.Split(c.testFrac, c.seed)
		return trainSet, testSet, fmt.Sprintf("UCI digits (%s), %.0f%% held out", c.digits, 100*c.testFrac), nil
	}
	trainSet, err = loadMNIST(c.data, "train")
	if err != nil {
		return nil, nil, "", err
	}
	testSet, err = loadMNIST(c.data, "t10k")
	if errors.Is(err, fs.ErrNotExist) {
		trainSet, testSet = trainSet.Split(c.testFrac, c.seed)
		return trainSet, testSet, fmt.Sprintf("IDX files in %s (no t10k files: %.0f%% of train held out)", c.data, 100*c.testFrac), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	if !equalShapes(trainSet.Shape, testSet.Shape) {
		return nil, nil, "", fmt.Errorf("%s: train images are %v, t10k images %v", c.data, trainSet.Shape[1:], testSet.Shape[1:])
	}
	return trainSet, testSet, fmt.Sprintf("IDX files in %s (t10k held out)", c.data), nil
}

// digitsMax is the largest pixel value of the digits data: each pixel
// counts the set pixels of a 4×4 block.
const digitsMax = 16

func loadDigits(path string) (*data.Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && path == defaultDigits {
			err = fmt.Errorf("%w (run the demo from the repository root, or pass -digits)", err)
		}
		return nil, err
	}
	defer f.Close()
	d, err := data.ReadCSV(f, -1, []int{1, 8, 8})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range d.X {
		d.X[i] /= digitsMax
	}
	return d, nil
}

// loadMNIST reads prefix-images-idx3-ubyte and prefix-labels-idx1-ubyte
// (each also as .gz) from dir. A missing file is an error wrapping
// fs.ErrNotExist.
func loadMNIST(dir, prefix string) (*data.Dataset, error) {
	images, err := openIDX(dir, prefix+"-images-idx3-ubyte")
	if err != nil {
		return nil, err
	}
	defer images.Close()
	labels, err := openIDX(dir, prefix+"-labels-idx1-ubyte")
	if err != nil {
		return nil, err
	}
	defer labels.Close()
	d, err := data.LoadMNIST(images, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, prefix+"-*"), err)
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("%s: no images", images.Name())
	}
	if d.Shape[1] < 4 || d.Shape[2] < 4 {
		return nil, fmt.Errorf("%s: images of %d×%d are too small for two 2×2 poolings", images.Name(), d.Shape[1], d.Shape[2])
	}
	return d, nil
}

// openIDX opens name in dir, or name.gz.
func openIDX(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if fgz, errgz := os.Open(path + ".gz"); errgz == nil {
			return fgz, nil
		}
		return nil, fmt.Errorf("%s(.gz): %w", path, fs.ErrNotExist)
	}
	return f, err
}

func equalShapes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
