// Package reliability is lapse's standing reliability suite (issue 16): it
// builds the lapse binary, starts it on a data folder with every port
// picked by the system, and drives it with the real clients (amqp091-go,
// azservicebus, go-amqp, azcosmos) through load, bad input, a million
// pending messages, kill -9 and random clock steps.
//
// Its tests carry the build tag reliability, so that the README's test
// command stays quick; CI runs them as
//
//	go test -tags reliability -count=1 ./reliability/
//
// without the race detector, which caps a process at 8,128 goroutines and
// would measure itself rather than lapse. Each test logs its figures
// (go test -v shows them).
package reliability
