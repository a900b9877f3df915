package core

// The engine's structures grow with their busiest moment: a burst of a
// million items leaves slices and maps sized for a million once the items
// are gone, since neither append nor delete ever gives room back. Each
// structure gives its room back when it empties, or when it holds less
// than a quarter of the room it has (issue 16.5). Amortised: a structure
// shrunk to twice what it holds must lose half of that, or double, before
// it is copied again, so one at the boundary is not copied back and forth;
// and a structure with room for keepRoom entries or fewer keeps it, so an
// entity that holds a few items at a time never allocates for them again.

// keepRoom is the room (in entries) a structure keeps however empty it is.
const keepRoom = 256

// tooRoomy reports whether a structure holding n entries in room for c
// should give room back.
func tooRoomy(n, c int) bool { return c > keepRoom && 4*n < c }

// refit returns s[head:] in a new slice with room for twice what it holds,
// or nil when it holds nothing.
func refit[T any](s []T, head int) []T {
	n := len(s) - head
	if n == 0 {
		return nil
	}
	out := make([]T, n, 2*n)
	copy(out, s[head:])
	return out
}

// notePeak records len(m) in *peak when it is the largest since m was
// made: a Go map keeps the room of its largest size until it is dropped.
func notePeak[K comparable, V any](m map[K]V, peak *int) {
	if len(m) > *peak {
		*peak = len(m)
	}
}

// shrunk returns m after a delete: m itself, or, when it holds less than
// a quarter of its peak, a copy of it sized for what it holds (nil when
// empty), with *peak set to that.
func shrunk[K comparable, V any](m map[K]V, peak *int) map[K]V {
	n := len(m)
	if !tooRoomy(n, *peak) {
		return m
	}
	*peak = n
	if n == 0 {
		return nil
	}
	out := make(map[K]V, n)
	for k, v := range m {
		out[k] = v
	}
	return out
}
