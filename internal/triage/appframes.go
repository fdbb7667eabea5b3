package triage

import "strings"

// frameworkFrames are the runtimes and frameworks whose frames are never
// where an application's failure is: a NullPointerException thrown inside
// Spring's listener adapter was caused by the listener it called.
var frameworkFrames = []string{
	// JVM
	"java.", "javax.", "jakarta.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.",
	"org.springframework.", "com.fasterxml.", "org.apache.", "com.rabbitmq.", "io.micrometer.",
	"io.netty.", "reactor.", "org.hibernate.", "com.zaxxer.", "org.postgresql.",
	// .NET
	"System.", "Microsoft.", "MassTransit.", "NServiceBus.", "RabbitMQ.Client.", "Newtonsoft.",
	"Polly.", "Npgsql.", "Dapper.",
	// Python (module paths, see pythonModule)
	"celery.", "kombu.", "amqp.", "billiard.", "vine.", "pika.", "asyncio.", "concurrent.",
	"importlib.", "json.", "requests.", "urllib3.",
	// Go
	"runtime.", "reflect.", "testing.", "net/", "sync.", "encoding/", "github.com/rabbitmq/amqp091-go",
	"github.com/streadway/amqp",
}

// FrameRules tell an application's frames from the rest. App globs (the
// config's app_frames, '*' any run of characters, '?' one) name the
// packages that are the operator's own and win over the framework list.
type FrameRules struct {
	app []string
}

// NewFrameRules returns rules with the operator's app_frames globs.
func NewFrameRules(appGlobs []string) FrameRules {
	var r FrameRules
	for _, g := range appGlobs {
		if g = strings.TrimSpace(g); g != "" {
			r.app = append(r.app, g)
		}
	}
	return r
}

// IsApp says whether f is the application's: named by an app_frames glob,
// else in no runtime or framework of frameworkFrames (when globs are given,
// they alone decide).
func (r FrameRules) IsApp(f Frame) bool {
	name := frameName(f)
	if name == "" {
		return false
	}
	if len(r.app) > 0 {
		for _, g := range r.app {
			if globMatch(g, name) || (f.File != "" && globMatch(g, f.File)) {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(f.File, "<") || (strings.Contains(f.File, "/lib/python") && !strings.Contains(f.File, "-packages/")) {
		return false // Python's own library and frozen modules
	}
	for _, p := range frameworkFrames {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

// firstApp is the first application frame of a trace, looked for from the
// root cause outwards: a Java cause elides the frames it shares with the one
// it caused ("... 4 more"), so the application frame that called the
// failing library is often in an outer cause's frames.
func (r FrameRules) firstApp(st StackTrace) (Frame, bool) {
	for i := len(st.Causes) - 1; i >= 0; i-- {
		for _, f := range st.Causes[i].Frames {
			if r.IsApp(f) {
				f.Func = frameName(f)
				return f, true
			}
		}
	}
	return Frame{}, false
}

// frameName is a frame's qualified name; a Python frame's module comes from
// its file: .../site-packages/celery/app/trace.py in trace_task is
// celery.app.trace.trace_task, /app/shipping/carrier.py in quote is
// app.shipping.carrier.quote.
func frameName(f Frame) string {
	if !strings.HasSuffix(f.File, ".py") {
		return f.Func
	}
	mod := strings.TrimSuffix(f.File, ".py")
	for _, dir := range []string{"site-packages/", "dist-packages/"} {
		if i := strings.LastIndex(mod, dir); i >= 0 {
			mod = mod[i+len(dir):]
		}
	}
	mod = strings.ReplaceAll(strings.Trim(mod, "/"), "/", ".")
	if f.Func == "" || f.Func == "<module>" {
		return mod
	}
	return mod + "." + f.Func
}

// globMatch matches name against a glob of '*' (any run) and '?' (one
// byte), in time linear in their lengths times the stars.
func globMatch(glob, name string) bool {
	gi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		switch {
		case gi < len(glob) && (glob[gi] == '?' || glob[gi] == name[ni]):
			gi++
			ni++
		case gi < len(glob) && glob[gi] == '*':
			star, mark = gi, ni
			gi++
		case star >= 0:
			gi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for gi < len(glob) && glob[gi] == '*' {
		gi++
	}
	return gi == len(glob)
}
