package cli

import "testing"

func TestByteSizeReadsUnits(t *testing.T) {
	for in, want := range map[string]int64{
		"512": 512, "64KiB": 64 << 10, "64MiB": 64 << 20, "1GiB": 1 << 30, "256mb": 256 << 20, "2g": 2 << 30, " 8 M ": 8 << 20,
	} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "lots", "1TiB", "9999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q read as %d, want an error", in, b)
		}
	}
	b := byteSize(64 << 20)
	if b.String() != "64MiB" {
		t.Errorf("String = %q", b.String())
	}
}
