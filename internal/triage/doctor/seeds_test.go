package doctor

import "github.com/dlqt/dlqt/internal/triage/triagetest"

// The demo topologies, shared with the other subpackages' tests.
var (
	seed001Topology = triagetest.GraveyardTopology
	seed002Topology = triagetest.AppRetryTopology
)
