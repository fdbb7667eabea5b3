package broker

// Leased says whether a dlqt action holds queue's lease (returning.go).
var Leased = leased
