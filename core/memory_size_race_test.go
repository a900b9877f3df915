//go:build race

package core_test

// burstItems is smaller under the race detector, which makes each call
// many times slower; still enough that what an emptied entity would keep
// is over twice the test's start figure.
const burstItems = 50_000
