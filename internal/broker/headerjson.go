package broker

import (
	"github.com/dlqt/dlqt/internal/triage"
	"github.com/dlqt/dlqt/internal/triage/headerjson"
)

// Header values in a snapshot file are tagged with their type (package
// headerjson), so they read back as they were.

func tagHeaders(h triage.Headers) map[string]any { return headerjson.Tag(h) }

func untagHeaders(raw triage.Headers) (triage.Headers, error) { return headerjson.Untag(raw) }
