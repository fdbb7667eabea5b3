package triage

import "strings"

// TraceLine is one line of a stack trace as the message page shows it.
type TraceLine struct {
	Text  string // the line without its indentation
	Frame bool   // a call: "at ...", `File "..."`, a Go function
	App   bool   // a frame of the application (FrameRules.IsApp)
}

// TraceLines splits a trace (redacted and sanitised by the caller, newlines
// kept) into its lines and tells frames, and the application's frames,
// from exception lines. Bounded as ParseStackTrace is.
func TraceLines(text string, rules FrameRules) []TraceLine {
	raw := splitTrace(strings.TrimRight(text, "\r\n"))
	goPanic := isGoPanic(raw)
	out := make([]TraceLine, 0, len(raw))
	for i, r := range raw {
		line := strings.TrimSpace(r)
		tl := TraceLine{Text: line}
		switch {
		case strings.HasPrefix(line, "at "):
			if f, ok := parseAtFrame(line[3:]); ok {
				tl.Frame, tl.App = true, rules.IsApp(f)
			}
		case strings.HasPrefix(line, `File "`):
			if f, ok := pythonFrame(line); ok {
				tl.Frame, tl.App = true, rules.IsApp(f)
			}
		case goPanic && line != "" && r[0] != '\t' && i+1 < len(raw) && strings.HasPrefix(raw[i+1], "\t"):
			fn := strings.TrimPrefix(line, "created by ")
			if open := strings.LastIndexByte(fn, '('); open > 0 {
				fn = fn[:open]
			}
			tl.Frame, tl.App = true, rules.IsApp(Frame{Func: fn})
		}
		out = append(out, tl)
	}
	return out
}
