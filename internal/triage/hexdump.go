package triage

import (
	"fmt"
	"strings"
)

// hexDump renders b like `hexdump -C`: an offset, 16 bytes in hex split 8+8,
// and an ASCII column where anything unprintable is '.'. Bytes marked in
// hidden are shown as "**" and '*': a secret in a binary body is no more
// readable in hex than in text. The result is plain ASCII.
func hexDump(b []byte, hidden []bool) string {
	var sb strings.Builder
	sb.Grow((len(b)/16 + 2) * 80)
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(&sb, "%08x ", off)
		for i := range 16 {
			if i == 8 {
				sb.WriteByte(' ')
			}
			switch {
			case i >= len(line):
				sb.WriteString("   ")
			case isHidden(hidden, off+i):
				sb.WriteString(" **")
			default:
				sb.WriteByte(' ')
				sb.WriteByte(hexDigits[line[i]>>4])
				sb.WriteByte(hexDigits[line[i]&0xf])
			}
		}
		sb.WriteString("  |")
		for i, c := range line {
			switch {
			case isHidden(hidden, off+i):
				sb.WriteByte('*')
			case c >= 0x20 && c < 0x7f:
				sb.WriteByte(c)
			default:
				sb.WriteByte('.')
			}
		}
		sb.WriteString("|\n")
	}
	fmt.Fprintf(&sb, "%08x", len(b))
	return sb.String()
}

func isHidden(hidden []bool, i int) bool { return i < len(hidden) && hidden[i] }

const hexDigits = "0123456789abcdef"
