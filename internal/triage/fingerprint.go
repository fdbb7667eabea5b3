package triage

import (
	"strconv"
	"strings"
)

// Fault is a failure read from a message's fault headers: the root-cause
// exception and the first application frame it was thrown from.
type Fault struct {
	ExceptionType string // the root cause's type as printed, e.g. com.fasterxml.jackson.core.JsonParseException
	Message       string // the root cause's message, first line
	At            Frame  // the first application frame; zero when none is known
}

// Key is the fingerprint messages are grouped by: the root cause's short
// type and where it was thrown, without the line (a redeploy moves lines),
// e.g. "JsonParseException @ InventoryService.reserve". With no type it is
// the message with its numbers, ids and quoted values normalised, so that
// "timeout after 3000 ms for order 7" and "... 8" stay one group.
func (f Fault) Key() string {
	typ := shortType(f.ExceptionType)
	switch {
	case typ != "" && f.At.Func != "":
		return typ + " @ " + shortFunc(f.At.Func)
	case typ != "":
		return typ
	}
	return NormaliseFaultText(f.Message)
}

// ThrownAt is the frame with its line: the fully qualified function and
// ":line", e.g. com.acme.inventory.InventoryService.reserve:88.
func (f Fault) ThrownAt() string {
	if f.At.Func == "" {
		return ""
	}
	if f.At.Line > 0 {
		return f.At.Func + ":" + strconv.Itoa(f.At.Line)
	}
	return f.At.Func
}

// FaultLabel is how a fingerprinted group is shown: its key with the line
// of thrownAt (its first message's), "JsonParseException @
// InventoryService.reserve:88". Other codes are shown as they are.
func FaultLabel(code, thrownAt string) string {
	if thrownAt == "" || !strings.Contains(code, " @ ") {
		return code
	}
	i := strings.LastIndexByte(thrownAt, ':')
	if i < 0 || i == len(thrownAt)-1 || strings.Trim(thrownAt[i+1:], "0123456789") != "" {
		return code
	}
	return code + thrownAt[i:]
}

// Fault headers, where each framework writes its failure.
const (
	hdrSpringMessage  = "x-exception-message"
	hdrMTMessage      = "MT-Fault-Message"
	hdrMTStackTrace   = "MT-Fault-StackTrace"
	hdrNSBMessage     = "NServiceBus.ExceptionInfo.Message"
	hdrNSBStackTrace  = "NServiceBus.ExceptionInfo.StackTrace"
	hdrNSBInnerType   = "NServiceBus.ExceptionInfo.InnerExceptionType"
	hdrPlainException = "x-exception"
	hdrPlainError     = "x-error"
)

// traceHeaders hold a whole trace, best first: Spring AMQP's
// RepublishMessageRecoverer, NServiceBus (Exception.ToString()), MassTransit
// (frames only), then the plain headers applications and Celery tasks set.
var traceHeaders = []string{springStacktrace, hdrNSBStackTrace, hdrMTStackTrace, hdrPlainException, hdrPlainError}

// FaultTrace is the raw trace text a message carries, and the header it is
// in; "" when it has none.
func FaultTrace(h Headers) (text, header string) {
	for _, key := range traceHeaders {
		if s := headerString(h, key); strings.TrimSpace(s) != "" {
			return s, key
		}
	}
	return "", ""
}

// FaultOf reads the failure from the fault headers of Spring AMQP,
// MassTransit, NServiceBus, Celery and plain x-exception/x-error, with
// rules telling application frames from the others. ok is false when the
// message carries none.
func FaultOf(h Headers, rules FrameRules) (Fault, bool) {
	var f Fault
	if text, _ := FaultTrace(h); text != "" {
		st := ParseStackTrace(text)
		if root, ok := st.Root(); ok {
			f.ExceptionType, f.Message = root.Type, root.Message
		}
		f.At, _ = rules.firstApp(st)
	}
	if f.ExceptionType == "" {
		// A trace without its exception line (MassTransit's): the type
		// headers. NServiceBus names the inner exception apart.
		for _, key := range []string{hdrNSBInnerType, nServiceBusType, massTransitType} {
			if s := headerText(h, key); isTypeName(s) {
				f.ExceptionType = s
				break
			}
		}
	}
	if f.Message == "" {
		for _, key := range []string{hdrSpringMessage, hdrMTMessage, hdrNSBMessage} {
			if s := headerText(h, key); s != "" {
				f.Message = s
				break
			}
		}
	}
	f.ExceptionType = oneLine(f.ExceptionType, maxReasonCode)
	f.Message = oneLine(f.Message, maxDetail)
	f.At.Func = oneLine(f.At.Func, maxName)
	f.At.File = oneLine(f.At.File, maxName)
	return f, f.ExceptionType != "" || f.Message != ""
}

// shortType is a type without its namespace: JsonParseException.
func shortType(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 && i < len(t)-1 {
		return t[i+1:]
	}
	return t
}

// shortFunc is a frame's class (or Go package) and method:
// InventoryService.reserve, PspClient.ChargeAsync, post.(*Poster).Post.
func shortFunc(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 { // a Go import path
		return fn[i+1:]
	}
	last := strings.LastIndexByte(fn, '.')
	if last <= 0 {
		return fn
	}
	if prev := strings.LastIndexByte(fn[:last], '.'); prev >= 0 {
		return fn[prev+1:]
	}
	return fn
}

// maxNormalised bounds a key made of a message.
const maxNormalised = 96

// normalWord is a word of a failure message as a key has it: a number is
// <n>; a UUID, a long hex string or a word of three digits or more
// (cus_4402) is <id>; other words stay.
func normalWord(w string) string {
	digits, hex := 0, true
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c != '-' && !isHexDigit(c):
			hex = false
		}
	}
	switch {
	case digits == len(w):
		return "<n>"
	case digits > 0 && hex && len(w) >= 8, digits >= 3:
		return "<id>"
	}
	return w
}

// NormaliseFaultText makes a failure message a grouping key: quoted values
// become "…", ids (UUIDs, long hex) "<id>", numbers "<n>", so that one
// failure with different data is one key.
func NormaliseFaultText(s string) string {
	s = oneLine(s, 4*maxNormalised)
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			if end := strings.IndexByte(s[i+1:], c); end >= 0 {
				b.WriteByte(c)
				b.WriteString("…")
				b.WriteByte(c)
				i += end + 2
				continue
			}
		case isWordByte(c) && (i == 0 || !isWordByte(s[i-1])):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '-' && j+1 < len(s) && isWordByte(s[j+1])) {
				j++
			}
			b.WriteString(normalWord(s[i:j]))
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return clipText(b.String(), maxNormalised)
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
