package broker

// The header conversions are unexported; the tests in broker_test (which
// need brokertest, and so cannot live in package broker) reach them here.
var (
	TableToHeaders = tableToHeaders
	HeadersToTable = headersToTable
)
