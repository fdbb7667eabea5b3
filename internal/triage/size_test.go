package triage

import "testing"

func TestSizeText(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{128 << 20, "128.0 MiB"}, {3 << 30, "3.0 GiB"}, {5 << 50, "5.0 PiB"}, {2048 << 50, "2048.0 PiB"},
	} {
		if got := SizeText(c.n); got != c.want {
			t.Errorf("SizeText(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
