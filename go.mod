module github.com/dlqt/dlqt

go 1.26.0

require github.com/michaelklishin/rabbit-hole/v2 v2.16.0

require (
	github.com/rabbitmq/amqp091-go v1.16.0 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/tools v0.36.0 // indirect
)
