package mpi

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoad checks the library search: what a failure says, that a
// library which is not Open MPI is refused by name, and (where Open MPI
// is installed, always under make test-mpi) that libmpi loads. The
// failures come first: once a library is loaded the process keeps it.
func TestLoad(t *testing.T) {
	loaded.Lock()
	already := loaded.path != ""
	loaded.Unlock()
	if already {
		t.Fatal("an MPI library was loaded before TestLoad: run it first (go test -run TestLoad)")
	}
	if !canLoad {
		_, err := Load()
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorContains(t, err, "needs cgo on Linux, and this program was built for "+runtime.GOOS)
		require.ErrorContains(t, err, "apt-get install libopenmpi3 openmpi-bin")
		return
	}

	t.Run("missing", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "libmpi.so.40")
		t.Setenv(LibraryEnv, missing)
		_, err := Load()
		var le *LoadError
		require.ErrorAs(t, err, &le)
		require.ErrorIs(t, err, ErrUnavailable)
		require.Len(t, le.Tried, 1)
		require.Contains(t, le.Tried[0], missing+": ")
		require.Contains(t, le.Tried[0], "No such file")
		require.ErrorContains(t, err, "cannot go distributed")
		require.ErrorContains(t, err, "apt-get install libopenmpi3 openmpi-bin")
		_, err = Init()
		require.ErrorIs(t, err, ErrUnavailable)
	})

	t.Run("not MPI", func(t *testing.T) {
		t.Setenv(LibraryEnv, "libm.so.6")
		_, err := Load()
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorContains(t, err, "libm.so.6: not an MPI library")
	})

	t.Run("MPICH", func(t *testing.T) {
		// A library with MPICH's MPI_Get_library_version and none of Open
		// MPI's globals stands in for libmpich.
		cc := "cc"
		if out, err := exec.Command("go", "env", "CC").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
			cc = strings.TrimSpace(string(out))
		}
		dir := t.TempDir()
		src, lib := filepath.Join(dir, "fake.c"), filepath.Join(dir, "libmpi.so.12")
		require.NoError(t, os.WriteFile(src, []byte(`#include <string.h>
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) { return 1; }
int MPI_Get_library_version(char *v, int *n) {
	strcpy(v, "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n");
	*n = (int)strlen(v);
	return 0;
}
`), 0o644))
		out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
		require.NoError(t, err, "%s", out)
		t.Setenv(LibraryEnv, lib)
		_, err = Load()
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorContains(t, err, lib+`: not Open MPI but "MPICH Version:`+"\t"+`4.0.2": the binding uses Open MPI's ABI; MPICH and its derivatives (Intel MPI, MVAPICH) are not supported`)
	})

	t.Run("search", func(t *testing.T) {
		t.Setenv(LibraryEnv, "")
		os.Unsetenv(LibraryEnv)
		path, err := Load()
		if err != nil {
			if os.Getenv("WEBTENSOR_TEST_MPI") == "1" {
				t.Fatalf("make test-mpi installs Open MPI, yet: %v", err)
			}
			// Without Open MPI, both names were tried.
			var le *LoadError
			require.True(t, errors.As(err, &le), "%v", err)
			require.Len(t, le.Tried, 2)
			require.True(t, strings.HasPrefix(le.Tried[0], "libmpi.so.40: "), le.Tried[0])
			require.True(t, strings.HasPrefix(le.Tried[1], "libmpi.so: "), le.Tried[1])
			t.Skipf("Open MPI is not installed here: %v", err)
		}
		require.Equal(t, "libmpi.so.40", path)
		v, err := LibraryVersion()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(v, "Open MPI v"), "MPI_Get_library_version: %q", v)
		again, err := Load()
		require.NoError(t, err)
		require.Equal(t, path, again)
	})
}
