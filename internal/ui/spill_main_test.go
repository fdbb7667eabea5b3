package ui

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the spill files of the tests' browses out of the user's
// cache directory: a test model that is never stopped leaves its current
// read's file, as a killed dlqt would; the folder goes with the run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dlqt-ui-cache-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
