// Package server is lapse's wiring: the clock, the store, the engine, the
// expiry runner and every listener, started by Main. The lapse command
// runs it (ParseFlags, Run, Close), and so do the end-to-end tests and the
// lapsetest package, which starts it in-process for a Go user's tests.
package server
