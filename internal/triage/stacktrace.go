package triage

import (
	"strconv"
	"strings"
)

// Bounds on a trace: a fault header is attacker-controlled text, and a
// trace is read for every message of a queue.
const (
	maxTraceBytes  = 64 << 10 // read no further into a trace
	maxTraceLines  = 2000
	maxTraceCauses = 32
	maxCauseFrames = 256
)

// StackTrace is an exception trace read from a fault header: the chain of
// causes, outermost first, so the last is the root cause.
type StackTrace struct {
	Causes []Cause
}

// Cause is one exception of a chain. Frames are innermost first: Frames[0]
// is where this exception was thrown, whatever order the language prints.
type Cause struct {
	Type    string
	Message string
	Frames  []Frame
}

// Frame is one call of a trace. Func is qualified as the language prints it
// (com.acme.InventoryService.reserve, Billing.Gateway.PspClient.ChargeAsync,
// main.(*Inventory).Reserve); a Python frame has the module's file and its
// function. Line is 0 when the trace does not say.
type Frame struct {
	Func string
	File string
	Line int
}

// Root is the innermost cause, the one the failure started from.
func (st StackTrace) Root() (Cause, bool) {
	if len(st.Causes) == 0 {
		return Cause{}, false
	}
	return st.Causes[len(st.Causes)-1], true
}

// ParseStackTrace reads a Java (Caused by:, "... N more"), .NET (--->,
// "at X in file:line N"), Python (tracebacks and their chains) or Go
// (panic, goroutine) trace. Unknown text yields no causes. Work is bounded
// by maxTraceBytes and maxTraceLines whatever the input.
func ParseStackTrace(text string) StackTrace {
	lines := splitTrace(text)
	switch {
	case isPythonTrace(lines):
		return parsePython(lines)
	case isGoPanic(lines):
		return parseGoPanic(lines)
	}
	return parseJavaOrDotNet(lines)
}

// splitTrace is the lines of a trace within maxTraceBytes and
// maxTraceLines, "\r" dropped from their ends; the slice is sized to what
// is there (SplitN with the bound would allocate it whole every time).
func splitTrace(text string) []string {
	if len(text) > maxTraceBytes {
		text = text[:maxTraceBytes]
	}
	lines := make([]string, 0, min(strings.Count(text, "\n")+1, maxTraceLines))
	for len(lines) < maxTraceLines {
		line, rest, more := strings.Cut(text, "\n")
		lines = append(lines, strings.TrimSuffix(line, "\r"))
		if !more {
			break
		}
		text = rest
	}
	return lines
}

// parseJavaOrDotNet reads the two languages together: both print the
// exception first and frames as "at ..." lines. Java lists each cause after
// "Caused by:" with its own frames; .NET lists every inner exception after
// "--->" in the header, the innermost's frames first, then an "End of inner
// exception stack trace" line before each outer one's.
func parseJavaOrDotNet(lines []string) StackTrace {
	var st StackTrace
	cur := -1           // the cause frames go to
	suppressed := false // inside a Java "Suppressed:" block, not part of the chain
	addCause := func(header string) {
		for i, part := range strings.Split(header, " ---> ") {
			if len(st.Causes) >= maxTraceCauses {
				break
			}
			typ, msg := splitException(part)
			if typ == "" && i > 0 {
				continue
			}
			st.Causes = append(st.Causes, Cause{Type: typ, Message: msg})
		}
		cur = len(st.Causes) - 1
	}
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
		case strings.HasPrefix(line, "at "):
			if suppressed {
				continue
			}
			f, ok := parseAtFrame(line[3:])
			if !ok {
				continue
			}
			if cur < 0 { // frames with no exception line (MassTransit's StackTrace header)
				st.Causes = append(st.Causes, Cause{})
				cur = 0
			}
			if c := &st.Causes[cur]; len(c.Frames) < maxCauseFrames {
				c.Frames = append(c.Frames, f)
			}
		case strings.HasPrefix(line, "Caused by:"):
			suppressed = false
			addCause(strings.TrimSpace(line[len("Caused by:"):]))
		case strings.HasPrefix(line, "Suppressed:"):
			suppressed = true
		case strings.HasPrefix(line, "---> "):
			addCause(strings.TrimSpace(line[len("---> "):]))
		case strings.HasPrefix(line, "--- End of inner exception"):
			if cur > 0 {
				cur--
			}
		case strings.HasPrefix(line, "..."), strings.HasPrefix(line, "--- "):
			// "... 12 more" (frames shared with the enclosing trace) and
			// "--- End of stack trace from previous location ---".
		case len(st.Causes) == 0: // the first line names the exception; later text continues its message
			addCause(line)
		}
	}
	return st
}

// splitException splits "type: message" (Throwable.toString(), .NET's
// ToString()) into the type and the first line of the message; "" for a
// type when the text before the colon is not a type name.
func splitException(s string) (string, string) {
	name, msg, _ := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if typ, code, ok := strings.Cut(name, " ("); ok && strings.HasSuffix(code, ")") { // SqlException (0x80131904)
		name = typ
	}
	if !isTypeName(name) {
		return "", strings.TrimSpace(s)
	}
	return name, strings.TrimSpace(msg)
}

// isTypeName says whether s can be an exception type: an identifier or a
// dotted (Java, .NET, Python) name, with $, + and backquotes of nested and
// generic types.
func isTypeName(s string) bool {
	if s == "" || len(s) > 512 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '_', r == '$', r == '+', r == '`':
		default:
			return false
		}
	}
	return true
}

// parseAtFrame reads what follows "at ": Java's
// "com.acme.Service.reserve(Service.java:88)" (with an optional module or
// class loader before a slash, and Logback's "~[jar]" after) and .NET's
// "Ns.Type.Method(Args) in /src/File.cs:line 42" (the " in" part is absent
// without symbols).
func parseAtFrame(s string) (Frame, bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return Frame{}, false
	}
	fn := strings.TrimSpace(s[:open])
	if slash := strings.LastIndexByte(fn, '/'); slash >= 0 { // java.base/java.lang.Thread.run, app//com.acme...
		fn = fn[slash+1:]
	}
	if fn == "" || strings.ContainsAny(fn, " \t[]") { // not Jackson's " at [Source: ...]"
		return Frame{}, false
	}
	f := Frame{Func: dotnetMethod(fn)}
	rest := s[open+1:]
	if in := strings.LastIndex(rest, ") in "); in >= 0 { // .NET with symbols
		loc := rest[in+len(") in "):]
		if file, line, ok := strings.Cut(loc, ":line "); ok {
			f.File = file
			f.Line = atoiBounded(line)
		} else {
			f.File = loc
		}
		return f, true
	}
	if end := strings.IndexByte(rest, ')'); end >= 0 { // Java: (File.java:88), (Native Method)
		loc := rest[:end]
		if file, line, ok := strings.Cut(loc, ":"); ok {
			f.File, f.Line = file, atoiBounded(line)
		} else if strings.Contains(loc, ".") && !strings.Contains(loc, " ") {
			f.File = loc
		}
	}
	return f, true
}

// dotnetMethod names the method an async state machine or a lambda stands
// for: "Ns.Type.<ChargeAsync>d__5.MoveNext" is Ns.Type.ChargeAsync, the name
// the code has.
func dotnetMethod(fn string) string {
	lt := strings.IndexByte(fn, '<')
	if lt < 0 {
		return fn
	}
	gt := strings.IndexByte(fn[lt:], '>')
	if gt < 0 {
		return fn
	}
	name := fn[lt+1 : lt+gt]
	if name == "" {
		return fn
	}
	return strings.TrimSuffix(fn[:lt], ".") + "." + name
}

// atoiBounded reads the leading digits of s (a line number), 0 if none.
func atoiBounded(s string) int {
	end := 0
	for end < len(s) && end < 9 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

func isPythonTrace(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Traceback (most recent call last):") {
			return true
		}
	}
	return false
}

// parsePython reads tracebacks. Python prints a chain's root cause first
// ("The above exception was the direct cause of the following exception"),
// each traceback's calls outermost first and its exception last.
func parsePython(lines []string) StackTrace {
	var printed []Cause // in print order: root cause first
	var cur *Cause
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(line, "Traceback (most recent call last):"):
			if len(printed) >= maxTraceCauses {
				cur = nil
				continue
			}
			printed = append(printed, Cause{})
			cur = &printed[len(printed)-1]
		case cur == nil || line == "":
		case strings.HasPrefix(line, `File "`):
			if f, ok := pythonFrame(line); ok && len(cur.Frames) < maxCauseFrames {
				cur.Frames = append(cur.Frames, f)
			}
		case raw != "" && raw[0] != ' ' && raw[0] != '\t' && cur.Type == "":
			cur.Type, cur.Message = splitException(line)
			if cur.Type == "" {
				cur.Type, cur.Message = line, ""
				if !isTypeName(line) {
					cur.Type, cur.Message = "", line
				}
			}
		}
	}
	st := StackTrace{Causes: make([]Cause, 0, len(printed))}
	for i := len(printed) - 1; i >= 0; i-- {
		c := printed[i]
		for l, r := 0, len(c.Frames)-1; l < r; l, r = l+1, r-1 {
			c.Frames[l], c.Frames[r] = c.Frames[r], c.Frames[l]
		}
		st.Causes = append(st.Causes, c)
	}
	return st
}

// pythonFrame reads `File "/app/inventory/service.py", line 88, in reserve`.
func pythonFrame(line string) (Frame, bool) {
	rest := line[len(`File "`):]
	file, rest, ok := strings.Cut(rest, `"`)
	if !ok {
		return Frame{}, false
	}
	f := Frame{File: file}
	if _, after, ok := strings.Cut(rest, "line "); ok {
		f.Line = atoiBounded(after)
	}
	if _, fn, ok := strings.Cut(rest, " in "); ok {
		f.Func = strings.TrimSpace(fn)
	}
	return f, true
}

func isGoPanic(lines []string) bool {
	return len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "panic: ")
}

// parseGoPanic reads a Go panic: "panic: value", then the panicking
// goroutine's calls, innermost first, each a function line and a
// "\tfile.go:88 +0x1d" line. Only the first goroutine is the failure.
func parseGoPanic(lines []string) StackTrace {
	first := strings.TrimSpace(lines[0])
	msg := strings.TrimSpace(strings.TrimPrefix(first, "panic: "))
	msg = strings.TrimSuffix(msg, " [recovered]")
	c := Cause{Type: "panic", Message: msg} // a runtime error says so in its message
	goroutines := 0
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "goroutine ") {
			if goroutines++; goroutines > 1 {
				break
			}
			continue
		}
		if goroutines == 0 || line == "" || lines[i][0] == '\t' || i+1 >= len(lines) {
			continue
		}
		next := lines[i+1]
		if !strings.HasPrefix(next, "\t") {
			continue
		}
		fn := strings.TrimPrefix(line, "created by ")
		if in := strings.Index(fn, " in goroutine "); in >= 0 {
			fn = fn[:in]
		}
		if open := strings.LastIndexByte(fn, '('); open > 0 {
			fn = fn[:open]
		}
		loc := strings.TrimSpace(next)
		if sp := strings.IndexByte(loc, ' '); sp >= 0 {
			loc = loc[:sp]
		}
		f := Frame{Func: fn, File: loc}
		if colon := strings.LastIndexByte(loc, ':'); colon >= 0 {
			f.File, f.Line = loc[:colon], atoiBounded(loc[colon+1:])
		}
		if len(c.Frames) < maxCauseFrames {
			c.Frames = append(c.Frames, f)
		}
		i++
	}
	return StackTrace{Causes: []Cause{c}}
}
