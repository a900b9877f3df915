//go:build !race

package core_test

// burstItems is how many items the memory tests fill an entity with: enough
// that what an emptied entity would keep shows well above the test's own
// heap, few enough for CI.
const burstItems = 200_000
