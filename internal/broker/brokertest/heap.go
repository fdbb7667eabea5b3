package brokertest

import (
	"runtime"
	"time"
)

// LiveHeapGrowth measures, until stop is closed, how far the live heap
// grows over what it is now: it collects garbage every 50 ms and reads the
// heap that is left, so what it reports is what the code under test keeps,
// not what it has dropped. The returned func waits for the last sample.
func LiveHeapGrowth(stop <-chan struct{}) func() int64 {
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	base := live()
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			peak = max(peak, live()-base)
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() int64 { <-done; return peak }
}
